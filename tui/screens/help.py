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
confidence, factuality, coherence) and accepts it when it reaches **θ**: the round's
calibrated confidence when a trained Critic fits the generator (the default), else the
paper's quality **Q**; otherwise it retrieves again (augment: missing keywords; refine:
other sources). Each round's card says which it compared.
The simrag loop asks a critic instead, and searches for what the critic found missing.

The **answer** comes first, then the sentence that supports it and how far to trust it:
the tier (high, medium, low) with the estimated probability that the answer is right when
there is one. The five scores and Q, which decide when the loop stops, are in the answer's
details and in each iteration's card (its queries, passages, answer, decision and times).

Sources read as *Title › Section*. Each has its Wikipedia URL for use when online, and
the whole article can be read offline, rebuilt from the index, with the cited passage
highlighted.

| key | does |
| --- | --- |
| Enter | ask the question typed below (up to 2,000 characters) |
| Esc | cancel the running question; from the evidence panel, back to the question |
| Ctrl+P | the command palette: loop, profile, index, model, export, copy, … |
| F2 | the index manager: list, build, switch and remove indexes |
| Ctrl+E | focus the evidence panel (↑/↓ pick a passage, `a` reads the whole article) |
| Ctrl+S | settings: loop, profile, θ, iteration budget, δ, critic, index, model |
| Ctrl+Y | copy the last answer, its support and its sources (with URLs) |
| Ctrl+O | export the session as Markdown and JSON traces |
| Tab | move between the history, evidence and input |
| F1 | this help |
| Ctrl+Q | quit |

Typing anywhere goes to the question line. Click a source to open it in the evidence
panel, or *article* to read the whole article.
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
