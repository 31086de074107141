"""Help: what the screen shows and every key."""

from __future__ import annotations

from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Markdown

HELP = """\
# scim-edge

Ask a question about the indexed Wikipedia articles. The loop retrieves passages,
generates an answer, scores it on five dimensions (completeness, consistency,
confidence, factuality, coherence) and accepts it when its quality **Q ≥ θ**;
otherwise it retrieves again (augment: missing keywords; refine: other sources).

Each iteration is a card: mode, queries, new passages (**+ new**), answer, the five
scores with Q against θ, the decision, and the time spent on retrieval, generation,
evaluation and coordination. The answer panel's colour is its tier (green high,
yellow medium, red low).

| key | does |
| --- | --- |
| Enter | ask the question typed below |
| Esc | cancel the running question |
| Ctrl+E | focus the evidence panel (↑/↓ pick a passage) |
| Ctrl+S | settings: loop, profile, θ, T_max, δ, critic, index, model |
| Ctrl+Y | copy the last answer (with its sources) |
| Ctrl+O | export the session as Markdown and JSON traces |
| Tab | move between the history, evidence and input |
| F1 | this help |
| Ctrl+Q | quit |

Click a passage title in a card or a citation to open it in the evidence panel.
"""


class HelpScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("f1", "close", "Close"),
        Binding("q", "close", "Close", show=False),
    ]

    def compose(self):
        with VerticalScroll(id="help-box") as box:
            box.border_title = "Help"
            box.border_subtitle = "Esc closes"
            yield Markdown(HELP)
        yield Footer()

    def action_close(self) -> None:
        self.dismiss(None)
