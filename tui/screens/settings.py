"""The settings screen: loop, profile, θ, the iteration budget, δ, critic, index and model.

Apply returns new Settings for the next question; Save also writes them to the config
file (merged into what is already there, so unrelated keys survive).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Collection

from textual import on
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Input, Label, Select, Static
from textual.widgets.select import InvalidSelectValueError

from scim_edge.errors import ConfigError, UserError
from scim_edge.settings import CRITICS, LOOPS, PROFILES, Settings, read_config, save_config

LOOP_WORDS = {
    "scim": "scim (five-dimension quality)",
    "simrag": "simrag (critic accepts or rejects)",
    "standard": "standard (one pass)",
    "iter-retgen": "iter-retgen (no quality stop)",
    "fixed-1": "fixed-1",
    "fixed-2": "fixed-2",
    "fixed-3": "fixed-3",
    "single-dim": "single-dim (one relevance score)",
}
PROFILE_KEYS = sorted({k for values in PROFILES.values() for k in values})


def with_profile(s: Settings, profile: str) -> Settings:
    """`s` switched to `profile`: the old profile's values reset, the new one's applied."""
    if profile == s.profile:
        return s
    defaults = Settings()
    reset = {k: getattr(defaults, k) for k in PROFILE_KEYS}
    reset.update(PROFILES[profile])
    return dataclasses.replace(s, profile=profile, **reset)


def _number(text: str, key: str, kind: type) -> float | int:
    try:
        return kind(text.strip())
    except ValueError:
        raise ConfigError(f"{key} must be a number (got {text!r})") from None


def budget_key(loop: str) -> str:
    """The setting that bounds `loop`'s rounds: simrag's own limit, else SCIM's T_max."""
    return "max_iterations" if loop == "simrag" else "t_max"


def budgets_of(s: Settings) -> dict[str, str]:
    """Both budgets, as the form's field shows them."""
    return {"t_max": str(s.t_max), "max_iterations": str(s.max_iterations)}


class SettingsScreen(ModalScreen[Settings | None]):
    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "save", "Save"),
        Binding("f1", "app.help", "Help"),
    ]

    def __init__(
        self,
        settings: Settings,
        indexes: list[str],
        models: list[str],
        active_index: str | None = None,
    ) -> None:
        super().__init__(id="settings")
        self.settings = settings
        self.indexes = indexes
        self.models = models
        self.active_index = active_index
        # the one "Iteration budget" field shows the chosen loop's; the other is kept
        self.budgets = {
            "t_max": str(settings.t_max),
            "max_iterations": str(settings.max_iterations),
        }
        self.budget_loop = settings.loop

    def compose(self):
        s = self.settings
        default_label = (
            f"default: {self.active_index}"
            if self.active_index and not s.index
            else "default (the installed one)"
        )
        index_opts = [(default_label, "")] + [
            (f"{n} (active)" if n == self.active_index and s.index else n, n) for n in self.indexes
        ]
        if s.index and s.index not in self.indexes:
            index_opts.append((f"{s.index} (active)", s.index))
        model_opts = [
            ("auto: installed Flan-T5, else extractive", ""),
            ("extractive (built-in, no model)", "extractive"),
        ]
        model_opts += [(f"{n} (Flan-T5 ONNX)", n) for n in self.models if n != "extractive"]
        if s.model and s.model not in ("extractive", *self.models):
            model_opts.append((s.model, s.model))
        with Vertical(id="settings-box") as box:
            box.border_title = "Settings"
            box.border_subtitle = "apply to the next question"
            with VerticalScroll(id="settings-form"):
                yield from self._row(
                    "Loop",
                    Select(
                        [(LOOP_WORDS.get(x, x), x) for x in LOOPS],
                        value=s.loop,
                        allow_blank=False,
                        id="loop",
                    ),
                )
                yield from self._row(
                    "Profile",
                    Select(
                        [(p, p) for p in PROFILES], value=s.profile, allow_blank=False, id="profile"
                    ),
                )
                yield from self._row(
                    "θ (SCIM accepts at ≥)", Input(f"{s.theta:g}", id="theta", type="number")
                )
                yield from self._row(
                    "Iteration budget",
                    Input(self.budgets[budget_key(s.loop)], id="t_max", type="integer"),
                )
                yield from self._row(
                    "δ (decline)", Input(f"{s.delta:g}", id="delta", type="number")
                )
                yield from self._row(
                    "Critic",
                    Select(
                        [(c, c) for c in CRITICS], value=s.critic, allow_blank=False, id="critic"
                    ),
                )
                yield from self._row(
                    "Index", Select(index_opts, value=s.index or "", allow_blank=False, id="index")
                )
                yield from self._row(
                    "Model / generator",
                    Select(model_opts, value=s.model or "", allow_blank=False, id="model"),
                )
            yield Static("", id="settings-error")
            with Horizontal(id="settings-buttons"):
                yield Button("Apply", id="apply", variant="primary")
                yield Button("Save to config", id="save")
                yield Button("Cancel", id="cancel")
        yield Footer()

    def _row(self, label: str, widget):
        widget.compact = True
        with Horizontal(classes="settings-row"):
            yield Label(label, classes="settings-label")
            yield widget

    def on_mount(self) -> None:
        cursor_blink = getattr(self.app, "cursor_blink", True)
        for field in self.query(Input):
            field.cursor_blink = cursor_blink
        self.query_one("#loop", Select).focus()

    @on(Select.Changed, "#profile")
    def _profile_changed(self, event: Select.Changed) -> None:
        if event.value in PROFILES:
            s = with_profile(self.settings, str(event.value))
            self.query_one("#theta", Input).value = f"{s.theta:g}"
            self.budgets = budgets_of(s)
            self.query_one("#t_max", Input).value = self.budgets[budget_key(self.budget_loop)]

    @on(Select.Changed, "#loop")
    def _loop_changed(self, event: Select.Changed) -> None:
        """Keep what the field says for the loop it was showing, and show the new one's."""
        field = self.query_one("#t_max", Input)
        self.budgets[budget_key(self.budget_loop)] = field.value
        self.budget_loop = str(event.value)
        field.value = self.budgets[budget_key(self.budget_loop)]

    def reload(self, settings: Settings, changed: Collection[str]) -> None:
        """Show the `changed` fields of `settings` in the form: a choice made in the command
        palette while the form is open must not be undone by its Apply, nor may it undo
        what the user typed into the other fields."""
        self.settings = settings
        for key in ("loop", "profile", "critic", "index", "model"):
            if key in changed:
                with contextlib.suppress(InvalidSelectValueError):  # not offered: as shown
                    self.query_one(f"#{key}", Select).value = getattr(settings, key) or ""
        for key in ("theta", "delta"):
            if key in changed:
                self.query_one(f"#{key}", Input).value = f"{getattr(settings, key):g}"

    def collect(self) -> Settings:
        """The settings the form describes; raises ConfigError on a bad value."""
        s = with_profile(self.settings, str(self.query_one("#profile", Select).value))
        loop = str(self.query_one("#loop", Select).value)
        budgets = {**self.budgets, budget_key(loop): self.query_one("#t_max", Input).value}
        return s.replace(
            loop=loop,
            theta=float(_number(self.query_one("#theta", Input).value, "θ", float)),
            # the field is the chosen loop's budget (SCIM's T_max or simrag's limit)
            t_max=int(_number(budgets["t_max"], "iteration budget", int)),
            max_iterations=int(_number(budgets["max_iterations"], "iteration budget", int)),
            delta=float(_number(self.query_one("#delta", Input).value, "δ", float)),
            critic=str(self.query_one("#critic", Select).value),
            index=str(self.query_one("#index", Select).value) or None,
            model=str(self.query_one("#model", Select).value) or None,
        )

    def _error(self, message: str) -> None:
        self.query_one("#settings-error", Static).update(message)

    @on(Button.Pressed, "#apply")
    def action_apply(self) -> None:
        try:
            self.dismiss(self.collect())
        except UserError as e:
            self._error(e.one_line())

    @on(Button.Pressed, "#save")
    def action_save(self) -> None:
        try:
            s = self.collect()
            values = read_config()
            values.update(
                {
                    "loop": s.loop,
                    "profile": s.profile,
                    "theta": s.theta,
                    "t_max": s.t_max,
                    "max_iterations": s.max_iterations,
                    "delta": s.delta,
                    "critic": s.critic,
                    "index": s.index,
                    "model": s.model,
                }
            )
            path = save_config(values)
        except UserError as e:
            self._error(e.one_line())
            return
        except OSError as e:
            self._error(f"cannot save the config file: {e.strerror or e}")
            return
        self.app.notify(f"Saved to {path}", title="Settings saved", timeout=6)
        self.dismiss(s)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
