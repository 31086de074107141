"""A row of short items that wraps between items, never inside one.

Textual wraps text at any whitespace (no-break spaces included), which splits
"evaluation 0.5 ms" across lines in a narrow card. This widget packs whole items into
lines for the width it actually has.
"""

from __future__ import annotations

from textual.content import Content
from textual.geometry import Size
from textual.widget import Widget


def pack(items: list[Content], width: int, sep: Content) -> list[Content]:
    lines: list[Content] = []
    line: Content | None = None
    for item in items:
        if line is None:
            line = item
        elif line.cell_length + sep.cell_length + item.cell_length <= width:
            line = line + sep + item
        else:
            lines.append(line)
            line = item
    if line is not None:
        lines.append(line)
    return lines


class ItemRow(Widget):
    DEFAULT_CSS = """
    ItemRow {
        height: auto;
    }
    """

    def __init__(self, sep: str = "  ", **kwargs) -> None:
        super().__init__(**kwargs)
        self.items: list[Content] = []
        self.sep = Content(sep).stylize("dim")

    def set_items(self, items: list[Content]) -> None:
        self.items = items
        self.refresh(layout=True)

    @property
    def plain(self) -> str:
        return self.sep.plain.join(item.plain for item in self.items)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return max(1, len(pack(self.items, max(1, width), self.sep)))

    def render(self) -> Content:
        width = max(1, self.content_size.width)
        return Content("\n").join(pack(self.items, width, self.sep))
