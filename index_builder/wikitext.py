"""Wikitext → plain text, fast enough to index a whole dump on one core.

Why not a real parser: mwparserfromhell builds a full syntax tree and runs at about 2 MB/s;
the index only needs readable prose split by section. This module runs a fixed pipeline of
passes. Flat constructs go through compiled regexes; nested ones (templates, tables, links)
go through small delimiter scanners: ``str.find`` hops from delimiter to delimiter (a
literal search runs at memory speed, a regex with a leading character class ~10x slower)
and a stack of "marks" into the output list drops a closed construct with
``del out[mark:]``. No pass ever rescans text, so pathological input (10,000 unclosed
``{{``, deep nesting, stray ``]]``) costs about the same per byte as prose.

Pipeline, in MediaWiki's own order where it matters:

1. ``#REDIRECT`` pages give no text (the builder stores them as aliases).
2. HTML comments go (an unclosed ``<!--`` runs to the end, as in MediaWiki).
3. Extension tags: ``<ref>``, ``<references>``, ``<math>``, ``<gallery>``, ``<source>`` and
   friends are dropped with their content; ``<nowiki>`` and ``<pre>`` keep their content as
   literal text (its markup characters are escaped to numeric entities and decoded last).
4. Templates, parser functions and magic words (``{{...}}``, ``{{{...}}}``) are dropped,
   except the small allow-list in ``_KEEP`` that renders prose (``{{lang|fr|texte}}`` →
   ``texte``, ``{{convert|5|km}}`` → ``5 km``, ``{{nowrap|x}}`` → ``x``, ``{{circa}}`` →
   ``c.``). Behaviour switches (``__NOTOC__``) are dropped.
5. Tables (``{| ... |}``, nested) are dropped.
6. Internal links keep their label (``[[A|b]]`` → b, ``[[A]]s`` → As); files/images,
   categories and interlanguage links are dropped, localized prefixes included.
7. External links keep their anchor; bare URLs are dropped.
8. Bold/italic quotes go, ``<br>`` becomes a space, other HTML tags are stripped keeping text.
9. Line pass: headings start sections, list markers go (``; term : definition`` becomes two
   lines), table remnants and rules go, entities are decoded, whitespace is collapsed and
   the punctuation a dropped construct leaves behind is tidied ("word ." → "word.",
   "(, x)" → "(x)", "()" dropped).

Choices worth knowing:

- ``<math>`` is dropped without a placeholder: a token like "formula" only adds BM25 noise.
- Unclosed constructs never swallow the page (except ``<!--``, which MediaWiki also hides to
  the end): an unclosed ``{{`` drops the rest of its own
  line (the template name and first arguments) and leaves the following text; an unclosed
  ``[[`` or ``{|`` is dropped as a delimiter (a table's leftover ``|``/``!`` rows are then
  removed by the line pass); stray closers are dropped.
- ``redirect_target`` reads ``#REDIRECT [[Target]]`` (old dumps mark redirects only in the
  text); ``is_disambiguation`` looks at templates, ``__DISAMBIG__`` and the title.
- ``CleanerError`` is raised only for a non-string page or an unexpected internal failure;
  broken markup is cleaned as well as it can be, never rejected.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable

__all__ = ["CleanerError", "clean_article", "is_disambiguation", "redirect_target"]


class CleanerError(Exception):
    """A page the cleaner cannot handle; the index builder skips and counts it."""


# ---- 1. redirects ---------------------------------------------------------------------------

_REDIRECT = re.compile(
    r"\s*#\s*(?:redirect|пренасочване|weiterleitung|redirection|перенаправление)\s*:?\s*"
    r"\[\[([^\[\]|\n]*)",
    re.I,
)


def redirect_target(wikitext: str) -> str | None:
    """Target title of a ``#REDIRECT [[Target]]`` page, else None."""
    m = _REDIRECT.match(wikitext)
    if not m:
        return None
    target = m.group(1).split("#", 1)[0].strip().replace("_", " ")
    return target or None


# ---- 2. comments ----------------------------------------------------------------------------

_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)

# ---- 3. extension tags ----------------------------------------------------------------------

_DROP_EXT = (
    "references|ref|math|chem|ce|gallery|source|syntaxhighlight|timeline|score|graph|"
    "imagemap|templatedata|templatestyles|hiero|mapframe|maplink|inputbox|categorytree|"
    "charinsert|indicator|section|includeonly|dynamicpagelist|rss"
)
_LITERAL_EXT = "nowiki|pre"
_EXT_TAG = re.compile(
    rf"<({_DROP_EXT}|{_LITERAL_EXT})\b[^<>]*?(/?)>|</(?:{_DROP_EXT}|{_LITERAL_EXT})\s*>", re.I
)
_EXT_CLOSE = {
    tag: re.compile(rf"</{tag}\s*>", re.I) for tag in f"{_DROP_EXT}|{_LITERAL_EXT}".split("|")
}
_LITERAL_TAGS = frozenset(_LITERAL_EXT.split("|"))
_ESCAPE = str.maketrans(
    {c: f"&#{ord(c)};" for c in "{}[]|'<>=*#:;!~_-"} | {"\n": " "}  # literal, one line
)


def _strip_ext_tags(text: str) -> str:
    """Extension tags, as MediaWiki's preprocessor reads them: an opener's body runs to the
    first closer of the same name (no nesting); an opener with no closer after it is
    dropped alone. Once a tag has no closer after some point, later openers of it skip the
    search, so many unclosed ``<ref>`` stay linear."""
    out: list[str] = []
    no_closer_after: dict[str, int] = {}
    pos = 0
    search = _EXT_TAG.search
    m = search(text)
    while m is not None:
        start, end = m.span()
        out.append(text[pos:start])
        pos = end
        tag = m.group(1)
        if tag is not None and not m.group(2):  # a paired opener (not "<ref/>", not "</ref>")
            tag = tag.lower()
            closer = None
            if no_closer_after.get(tag, end + 1) > end:
                closer = _EXT_CLOSE[tag].search(text, end)
                if closer is None:
                    no_closer_after[tag] = end
            if closer is not None:
                if tag in _LITERAL_TAGS:
                    out.append(text[end : closer.start()].translate(_ESCAPE))
                pos = closer.end()
        m = search(text, pos)
    out.append(text[pos:])
    return "".join(out)


# ---- 4. templates ---------------------------------------------------------------------------

_TPL_NAME = re.compile(r"[^|{}\[\]<\n]*")
_SWITCH = re.compile(r"__[A-ZА-ЯЁ]{3,}__")
_MAX_KEEP_DEPTH = 16  # deeper allow-listed templates are dropped (bounds the re-joins)


def _positional(args: list[str]) -> list[str]:
    """Positional arguments, stripped: unnamed ones and explicitly numbered ``1=...``."""
    out = []
    for a in args:
        eq = a.find("=")
        if eq > 0 and _NAMED_ARG.fullmatch(a, 0, eq):
            if a[:eq].strip().isdigit():  # {{math|1=E = mc2}}: an explicit position
                out.append(a[eq + 1 :].strip())
            continue
        out.append(a.strip())
    return out


_NAMED_ARG = re.compile(r"\s*[\w \-]+\s*")


def _named(args: list[str], *names: str) -> str:
    for a in args:
        key, eq, value = a.partition("=")
        if eq and key.strip().lower() in names:
            return value.strip()
    return ""


def _arg(n: int) -> Callable[[list[str]], str]:
    def render(args: list[str]) -> str:
        pos = _positional(args)
        return pos[n] if len(pos) > n else ""

    return render


def _last(args: list[str]) -> str:
    pos = _positional(args)
    return pos[-1] if pos else ""


def _const(value: str) -> Callable[[list[str]], str]:
    return lambda args: value


def _circa(args: list[str]) -> str:
    pos = _positional(args)
    return f"c. {pos[0]}" if pos and pos[0] else "c."


_RANGE_WORDS = frozenset(["-", "–", "to", "and", "or", "&", "x", "×", "by", "+/-", "±", "to(-)"])
_UNITS = {
    "sqmi": "sq mi",
    "sqkm": "km2",
    "sqft": "sq ft",
    "sqm": "m2",
    "c": "°C",
    "f": "°F",
    "degc": "°C",
    "degf": "°F",
    "mph": "mph",
    "kmh": "km/h",
    "km/h": "km/h",
}


def _convert(args: list[str]) -> str:
    pos = _positional(args)
    if not pos or not pos[0]:
        return ""
    if len(pos) >= 4 and pos[1].lower() in _RANGE_WORDS:
        sep = "–" if pos[1] in ("-", "–") else f" {pos[1]} "
        value, unit = f"{pos[0]}{sep}{pos[2]}", pos[3]
    else:
        value, unit = pos[0], pos[1] if len(pos) > 1 else ""
    unit = _UNITS.get(unit.lower(), unit)
    return f"{value} {unit}".strip()


def _quote(args: list[str]) -> str:
    return _named(args, "text", "quote") or _arg(0)(args)


def _frac(args: list[str]) -> str:
    pos = _positional(args)
    if len(pos) >= 3:
        return f"{pos[0]} {pos[1]}/{pos[2]}"
    if len(pos) == 2:
        return f"{pos[0]}/{pos[1]}"
    return f"1/{pos[0]}" if pos else ""


def _as_of(args: list[str]) -> str:
    pos = _positional(args)
    return ("As of " + " ".join(p for p in pos[:3] if p)).strip() if pos else ""


def _join(sep: str) -> Callable[[list[str]], str]:
    return lambda args: sep.join(p for p in _positional(args) if p)


def _money(symbol: str) -> Callable[[list[str]], str]:
    return lambda args: f"{symbol}{_arg(0)(args)}"


def _nihongo(args: list[str]) -> str:
    pos = _positional(args)
    if not pos:
        return ""
    native = pos[1] if len(pos) > 1 else ""
    return f"{pos[0]} ({native})" if native and pos[0] else pos[0] or native


def _val(args: list[str]) -> str:
    unit = _named(args, "u", "ul")
    value = _arg(0)(args)
    return f"{value} {unit}" if value and unit else value


def _prefixed(prefix: str, sep: str = " ") -> Callable[[list[str]], str]:
    """Ship and similar name templates: {{USS|Hornet|CV-12}} → USS Hornet."""
    return lambda args: f"{prefix}{sep}{_arg(0)(args)}".strip()


# Allow-list of templates that carry prose. Everything else is dropped. Arguments arrive
# already cleaned of nested templates; links inside them are resolved by the link pass.
_KEEP: dict[str, Callable[[list[str]], str]] = {
    "lang": _last,  # {{lang|fr|texte}} → texte
    "lang-": _arg(0),  # every {{lang-xx|texte}}
    "transl": _last,
    "transliteration": _last,
    "nowrap": _arg(0),
    "nobr": _arg(0),
    "nobreak": _arg(0),
    "avoid wrap": _arg(0),
    "small": _arg(0),
    "smaller": _arg(0),
    "big": _arg(0),
    "larger": _arg(0),
    "resize": _last,
    "em": _arg(0),
    "strong": _arg(0),
    "var": _arg(0),
    "mvar": _arg(0),
    "math": _arg(0),
    "code": _arg(0),
    "mono": _arg(0),
    "tt": _arg(0),
    "kbd": _arg(0),
    "samp": _arg(0),
    "abbr": _arg(0),
    "sic": _arg(0),
    "noitalic": _arg(0),
    "visible anchor": _arg(0),
    "vanchor": _arg(0),
    "ill": _arg(0),  # interlanguage link template: shows the local title
    "interlanguage link": _arg(0),
    "illm": _arg(0),
    "flag": _arg(0),
    "flagcountry": _arg(0),
    "quote": _quote,
    "blockquote": _quote,
    "convert": _convert,  # {{convert|5|km}} → 5 km
    "cvt": _convert,
    "circa": _circa,  # {{circa|1900}} → c. 1900
    "c.": _circa,
    "ca.": _circa,
    "frac": _frac,
    "sfrac": _frac,
    "as of": _as_of,
    "sortname": _join(" "),
    "hlist": _join(" · "),
    "flatlist": _arg(0),
    "plainlist": _arg(0),
    "ubl": _join(", "),
    "unbulleted list": _join(", "),
    "nihongo": _nihongo,
    "chem": _join(""),  # {{chem|H|2|O}} → H2O
    "angbr": lambda args: f"⟨{_arg(0)(args)}⟩",
    "keypress": _join("+"),
    "sc": _arg(0),
    "smallcaps": _arg(0),
    "val": _val,
    "vol.": _prefixed("vol."),
    "railgauge": _arg(0),
    "uss": _prefixed("USS"),
    "hms": _prefixed("HMS"),
    "hmas": _prefixed("HMAS"),
    "hmcs": _prefixed("HMCS"),
    "ss": _prefixed("SS"),
    "mv": _prefixed("MV"),
    "ov": _prefixed("OV", "-"),
    "us$": _money("US$"),
    "usd": _money("US$"),
    "gbp": _money("£"),
    "£": _money("£"),
    "€": _money("€"),
    "eur": _money("€"),
    "'": _const("'"),
    "'s": _const("'s"),
    "ndash": _const("–"),
    "–": _const("–"),
    "mdash": _const("—"),
    "—": _const("—"),
    "snd": _const(" – "),
    "spaced ndash": _const(" – "),
    "spnd": _const(" – "),
    "·": _const(" · "),
    "dot": _const(" · "),
    "middot": _const(" · "),
    "•": _const(" • "),
    "bull": _const(" • "),
    "nbsp": _const(" "),
    "sp": _const(" "),
    "=": _const("="),
}


def _template_key(raw: str) -> str:
    key = raw.strip().lower().replace("_", " ")
    if key.startswith("template:"):
        key = key[9:].lstrip()
    if key.startswith("lang-"):
        return "lang-"  # {{lang-fr|texte}} → texte
    return key


def _split_args(content: str) -> list[str]:
    """Split on ``|`` outside ``[[...]]`` (links are still raw at this stage)."""
    if "[[" not in content:
        return content.split("|")
    parts, depth, start = [], 0, 0
    for m in _ARG_TOKENS.finditer(content):
        tok = m.group()
        if tok == "[[":
            depth += 1
        elif tok == "]]":
            depth = max(0, depth - 1)
        elif depth == 0:
            parts.append(content[start : m.start()])
            start = m.end()
    parts.append(content[start:])
    return parts


_ARG_TOKENS = re.compile(r"\[\[|\]\]|\|")


def _strip_templates(text: str) -> str:
    """Drop ``{{...}}``/``{{{...}}}`` with MediaWiki's brace-run matching; render _KEEP."""
    if "{{" not in text:
        return text.replace("}}", "") if "}}" in text else text
    find = text.find
    out: list[str] = []
    # frame: [brace count, mark into out, allow-list key or None]
    stack: list[list] = []
    drops = 0  # frames on the stack that drop their content
    pos = 0
    size = len(text)
    next_open = find("{{")
    next_close = find("}}")
    while next_open >= 0 or next_close >= 0:
        is_open = next_close < 0 or 0 <= next_open < next_close
        start = next_open if is_open else next_close
        # MediaWiki matches whole brace runs: "{{{" opens one parameter frame
        brace = text[start]
        end = start + 2
        while end < size and text[end] == brace:
            end += 1
        if start > pos:
            out.append(text[pos:start])
        pos = end
        n = end - start
        if is_open:
            next_open = find("{{", end)
            if 0 <= next_close < end:
                next_close = find("}}", end)
            key = None
            if n == 2 and drops == 0 and len(stack) < _MAX_KEEP_DEPTH:
                key = _kept_key(text, end)
            if key is None:
                drops += 1
            stack.append([n, len(out), key])
            continue
        next_close = find("}}", end)
        if 0 <= next_open < end:
            next_open = find("{{", end)
        drops -= _close_frames(out, stack, n)
    out.append(text[pos:])
    if stack:
        out = _swallow_lines(out, [f[1] for f in stack])
    return "".join(out)


def _kept_key(text: str, end: int) -> str | None:
    """The allow-list key of the template whose name starts at `end`, or None when its
    content is dropped (every template not in _KEEP)."""
    key = _template_key(_TPL_NAME.match(text, end).group())
    return key if key in _KEEP else None


def _close_frames(out: list[str], stack: list[list], n: int) -> int:
    """Spend a run of `n` closing braces on the open frames, innermost first (three at a time
    at most, as MediaWiki does): a closed kept template is replaced in `out` by its rendering,
    anything else by nothing. Returns how many dropping frames left the stack."""
    dropped = 0
    while n >= 2 and stack:
        frame = stack[-1]
        count, mark, key = frame
        k = min(count, n, 3)
        n -= k
        if key is not None and k == 2:
            _render_kept(out, mark, key)
        else:
            del out[mark:]
        if count - k >= 2:
            frame[0] = count - k
        else:
            stack.pop()
            if key is None:
                dropped += 1
    return dropped


def _render_kept(out: list[str], mark: int, key: str) -> None:
    """Replace the pieces of a kept template (from `mark` on) by its rendering."""
    content = "".join(out[mark:])
    del out[mark:]
    args = _split_args(content)
    rendered = _KEEP[key](args[1:])
    if rendered:
        out.append(rendered)


def _swallow_lines(out: list[str], marks: list[int]) -> list[str]:
    """Unclosed openers drop the rest of their own line; one linear walk over the pieces."""
    mark_set = set(marks)
    first = min(marks)
    result = out[:first]
    swallow = False
    for i in range(first, len(out)):
        piece = out[i]
        if i in mark_set:
            swallow = True
        if swallow:
            nl = piece.find("\n")
            if nl < 0:
                continue
            piece = piece[nl:]
            swallow = False
        result.append(piece)
    return result


# ---- 5. tables ------------------------------------------------------------------------------


def _strip_tables(text: str) -> str:
    """Drop ``{| ... |}`` tables, nested; the opener's and closer's whole lines go too.

    Only the first ``{|``/``|}`` of a line can be a token (it must follow nothing but
    spaces, tabs or colons), so each line is looked at once: linear even on ``{|{|{|...``.
    """
    if "{|" not in text:
        return text
    find = text.find
    size = len(text)
    out: list[str] = []
    marks: list[int] = []
    pos = 0
    next_open = find("{|")
    next_close = find("|}")
    while next_open >= 0 or next_close >= 0:
        is_open = next_close < 0 or 0 <= next_open < next_close
        start = next_open if is_open else next_close
        line_start = text.rfind("\n", 0, start) + 1
        line_end = find("\n", start)
        if line_end < 0:
            line_end = size
        if 0 <= next_open < line_end:
            next_open = find("{|", line_end)
        if 0 <= next_close < line_end:
            next_close = find("|}", line_end)
        if line_start != start and text[line_start:start].strip(" \t:"):
            continue
        if line_start > pos:
            out.append(text[pos:line_start])
        pos = line_end
        if is_open:
            marks.append(len(out))
        elif marks:
            del out[marks.pop() :]
        # a stray "|}" line is simply dropped
    out.append(text[pos:])
    return "".join(out)


def _keep_groups(pattern: re.Pattern[str], text: str) -> str:
    """Replace each match by its captured groups, all in C: ``split`` interleaves text and
    groups (None when a group did not take part). On Python 3.11 ``sub(r"\\1", ...)`` runs
    template expansion in Python for every match, 2x slower here."""
    return "".join(filter(None, pattern.split(text)))


# ---- 6. internal links ----------------------------------------------------------------------

# Most links are flat: resolve them in C before the scanner sees them. A target with a
# colon may be a file, category or interlanguage link, so those go to the scanner.
_PLAIN_LINK = re.compile(r"\[\[(?:[^\[\]|:\n]*\|([^\[\]|\n]+)|([^\[\]|:\n]+))\]\]")
_TRAIL = re.compile(r"[^\W\d_]*")
_MAX_LINK_DEPTH = 32

_FILE_NS = frozenset(
    """file image файл картинка изображение datei bild fichier archivo imagen immagine plik
    grafika bestand arquivo imagem fil tiedosto kuva dosya resim soubor obrázek súbor slika
    датотека слика зображення fitxer fitxategi billede mynd skrá berkas gambar fișier imagine
    εικόνα αρχείο 文件 檔案 图像 圖像 ファイル 画像 파일 그림 ملف صورة קובץ תמונה""".split()
)
_CATEGORY_NS = frozenset(
    """category категория kategorie catégorie categoría categoria kategoria categorie kategori
    luokka kategória kategorija категорија категорія kategorio flokkur κατηγορία 分类 分類
    カテゴリ 분류 تصنيف קטגוריה""".split()
)
# Wikipedia language codes: [[de:Foo]] is an interlanguage link and shows nothing.
_LANG_CODES = frozenset(
    """aa ab ace ady af ak als alt am an ang ar arc ary arz as ast atj av avk awa ay az azb
    ba ban bar bat-smg bcl be be-tarask be-x-old bg bh bi bjn bm bn bo bpy br bs bug bxr ca
    cbk-zam cdo ce ceb ch cho chr chy ckb co cr crh cs csb cu cv cy da de din diq dsb dty dv
    dz ee el eml en eo es et eu ext fa ff fi fiu-vro fj fo fr frp frr fur fy ga gag gan gcr
    gd gl glk gn gom gor got gu gv ha hak haw he hi hif ho hr hsb ht hu hy hyw hz ia id ie ig
    ii ik ilo inh io is it iu ja jam jbo jv ka kaa kab kbd kbp kg ki kj kk kl km kn ko koi kr
    krc ks ksh ku kv kw ky la lad lb lbe lez lfn lg li lij lld lmo ln lo lrc lt ltg lv mad
    mai map-bms mdf mg mh mhr mi min mk ml mn mni mnw mo mr mrj ms mt mus mwl my myv mzn na
    nah nap nds nds-nl ne new ng nia nl nn no nov nqo nrm nso nv ny oc olo om or os pa pag
    pam pap pcd pdc pfl pi pih pl pms pnb pnt ps pt qu rm rmy rn ro roa-rup roa-tara ru rue
    rw sa sah sat sc scn sco sd se sg sh shn si simple sk skr sl sm smn sn so sq sr srn ss
    st stq su sv sw szl szy ta tay tcy te tet tg th ti tk tl tn to tpi tr trv ts tt tum tw
    ty tyv udm ug uk ur uz ve vec vep vi vls vo wa war wo wuu xal xh xmf yi yo yue za zea zh
    zh-classical zh-min-nan zh-yue zu""".split()
)
_PAREN_TAIL = re.compile(r"\s*\([^()]*\)\s*$")


def strip_paren_tail(title: str) -> str:
    """A title without its closing disambiguation aside: "Paris (band)" → "Paris"."""
    return _PAREN_TAIL.sub("", title)


def _render_link(content: str) -> str:
    target, sep, label = content.partition("|")
    target = target.strip()
    if target.startswith(":"):
        target = target[1:].lstrip()  # [[:Category:X]] is a visible link
    else:
        colon = target.find(":")
        if colon > 0:
            prefix = target[:colon].strip().lower()
            if prefix in _FILE_NS or prefix in _CATEGORY_NS or prefix in _LANG_CODES:
                return ""
    if sep:
        label = label.strip()
        if label:
            return label
        # pipe trick: [[Paris (band)|]] → Paris ; [[Help:Contents|]] → Contents
        return strip_paren_tail(target.rsplit(":", 1)[-1]).split(",", 1)[0].strip()
    return target


def _strip_links(text: str) -> str:
    if "[[" not in text:
        return text.replace("]]", "") if "]]" in text else text
    text = _keep_groups(_PLAIN_LINK, text)
    if "[[" not in text:
        return text.replace("]]", "") if "]]" in text else text
    find = text.find
    out: list[str] = []
    marks: list[int] = []
    pos = 0
    size = len(text)
    next_open = find("[[")
    next_close = find("]]")
    while True:
        if 0 <= next_open < pos:
            next_open = find("[[", pos)
        if 0 <= next_close < pos:
            next_close = find("]]", pos)
        if next_open < 0 and next_close < 0:
            break
        is_open = next_close < 0 or 0 <= next_open < next_close
        start = next_open if is_open else next_close
        if start > pos:
            out.append(text[pos:start])
        pos = start + 2
        if is_open:
            if len(marks) < _MAX_LINK_DEPTH:
                marks.append(len(out))
            continue
        if not marks:
            continue  # stray "]]"
        mark = marks.pop()
        content = "".join(out[mark:])
        del out[mark:]
        if pos < size and text[pos] == "]" and content.count("[") > content.count("]"):
            content += "]"  # "[[A|[http://x y]]]": the first "]" ends the external link
            pos += 1
        label = _render_link(content)
        if label:
            trail = _TRAIL.match(text, pos).end()
            if trail > pos:
                label += text[pos:trail]
                pos = trail
            out.append(label)
    out.append(text[pos:])
    return "".join(out)


# ---- 7. external links ----------------------------------------------------------------------

_EXT_LINK = re.compile(
    r"\[(?:https?://|ftp://|//|mailto:|news:|irc://|ircs://)[^\s\[\]<>\"]*+[ \t]*([^\[\]\n]*+)\]",
    re.I,
)
_URL_REST = re.compile(r"[^\s<>\[\]\"{}|]*+")
_SCHEMES = frozenset(["http", "https", "ftp"])


def _drop_bare_urls(text: str) -> str:
    """Drop ``http://...`` runs. Found with str.find on "://" (a regex with a leading
    character class scans ~10x slower than a literal search)."""
    out: list[str] = []
    pos = 0
    i = text.find("://")
    while i >= 0:
        j = i
        while j > pos and i - j < 5 and text[j - 1].isascii() and text[j - 1].isalpha():
            j -= 1
        if text[j:i].lower() in _SCHEMES:
            out.append(text[pos:j])
            pos = _URL_REST.match(text, i + 3).end()
            i = text.find("://", pos)
        else:
            i = text.find("://", i + 3)
    out.append(text[pos:])
    return "".join(out)


# ---- 8. inline markup -----------------------------------------------------------------------

_QUOTES = re.compile(r"''+")
_BR = re.compile(r"<br\s*/?\s*>|</br\s*>", re.I)
_HTML_TAG = re.compile(
    r"</?(?:div|span|small|big|sup|sub|font|center|s|u|del|ins|strike|code|tt|kbd|var|samp|"
    r"abbr|cite|blockquote|poem|p|b|i|em|strong|q|dfn|mark|bdi|bdo|ruby|rb|rp|rt|rtc|time|"
    r"data|hr|li|ul|ol|dl|dt|dd|table|tr|td|th|caption|thead|tbody|tfoot|h[1-6]|wbr|"
    r"noinclude|onlyinclude|nowiki|pre|ref|references|section|includeonly|gallery|math|"
    r"source|syntaxhighlight)\b[^<>]*>",
    re.I,
)

# ---- 9. lines -------------------------------------------------------------------------------

_EMPTY_PARENS = re.compile(r"\((?:\s|[,;:]|&nbsp;)*\)")
_LIST_MARKERS = "*#:;"
# Applied to each line: spaces left in front of punctuation by a dropped template
# or reference, and separators left inside brackets whose first/last words were dropped.
_PUNCT_FIXES = ((" ,", ","), (" .", "."), (" ;", ";"), (",,", ","))
_OPEN_JUNK = re.compile(r"\([ ,;]+")
_CLOSE_JUNK = re.compile(r"[ ,;]+\)")


def _sections(text: str) -> list[tuple[str, str]]:
    sections: list[tuple[str, str]] = []
    name = ""
    lines: list[str] = []
    for line in text.split("\n"):
        if not line:
            continue
        first = line[0]
        if first.isspace():
            line = line.lstrip()
            if not line:
                continue
            first = line[0]
        if first == "=":
            stripped = line.rstrip()
            if stripped.endswith("=") and len(stripped) > 2:
                if lines:
                    sections.append((name, "\n".join(lines)))
                    lines = []
                name = _finish(stripped.strip("="))
                continue
        elif first in _LIST_MARKERS:
            if first == ";" and ":" in line:  # "; term : definition" is two lines
                term, _, line = line.lstrip(_LIST_MARKERS).partition(":")
                term = _finish(term)
                if term:
                    lines.append(term)
            line = line.lstrip(_LIST_MARKERS)
        elif first in "|!" or line.startswith("----"):
            continue  # table remnants and horizontal rules
        line = _finish(line)
        if line:
            lines.append(line)
    if lines:
        sections.append((name, "\n".join(lines)))
    return sections


def _finish(line: str) -> str:
    """Decode entities, collapse every kind of whitespace (``&nbsp;`` included) and tidy the
    punctuation that dropped markup leaves behind."""
    if "&" in line:
        line = html.unescape(line)
    if line.isascii() and "  " not in line and "\t" not in line:  # isascii() is O(1)
        line = line.strip()
    else:
        line = " ".join(line.split())
    if " ," in line or " ." in line or " ;" in line or ",," in line:
        for old, new in _PUNCT_FIXES:
            line = line.replace(old, new)
    if "(" in line:
        if "( " in line or "(," in line or "(;" in line:
            line = _OPEN_JUNK.sub("(", line)
        if " )" in line or ",)" in line or ";)" in line:
            line = _CLOSE_JUNK.sub(")", line)
    return line


# ---- entry points ---------------------------------------------------------------------------


def _clean(text: str) -> list[tuple[str, str]]:
    if _REDIRECT.match(text):
        return []
    if "<!--" in text:
        text = _COMMENT.sub("", text)
    if "<" in text:
        text = _strip_ext_tags(text)
    if "__" in text:
        text = _SWITCH.sub("", text)
    text = _strip_templates(text)
    text = _strip_tables(text)
    text = _strip_links(text)
    if "[" in text:
        text = _keep_groups(_EXT_LINK, text)
    if "://" in text:
        text = _drop_bare_urls(text)
    if "''" in text:
        text = _QUOTES.sub("", text)
    if "<" in text:
        text = _BR.sub(" ", text)
        text = _HTML_TAG.sub("", text)
    if "(" in text:
        text = _EMPTY_PARENS.sub("", text)
    return _sections(text)


def clean_article(wikitext: str) -> list[tuple[str, str]]:
    """(section name, plain text) pairs in document order; the lead section is named "".

    Paragraphs and list items are separated by "\\n"; sections without text are omitted.
    Raises CleanerError only for input that is not text or an unexpected internal failure.
    """
    if not isinstance(wikitext, str):
        raise CleanerError(f"page text is {type(wikitext).__name__}, not str")
    try:
        return _clean(wikitext)
    except Exception as exc:  # any bug must skip one page, never abort a build
        raise CleanerError(f"cleaner failed: {type(exc).__name__}: {exc}") from exc


# A template whose name ends in "disambiguation"/"disambig" ({{Letter-NumberCombDisambig}},
# {{Human name disambiguation}}) or is one of the shorter names as a whole word. The name
# must end at "|" or "}}", so {{Disambiguation needed}} (a cleanup tag) does not count.
_DAB_TEMPLATE = re.compile(
    r"\{\{\s*(?:template:\s*)?(?:[^{}|\n]{0,60}?(?:disambiguation|disambig)|"
    r"(?:[^{}|\n]{0,60}?[ _])?(?:disamb|dab|hndis|geodis|set[ _]index(?:[ _]article)?|sia|"
    r"shipindex|mountainindex|roadindex|sportindex|surname|given[ _]name|пояснение|"
    r"многозначност|begriffsklärung|homonymie|desambiguación|disambigua|ujednoznacznienie|"
    r"неоднозначность))\s*(?:\||\}\})",
    re.I,
)
_DAB_SWITCH = re.compile(r"__DISAMBIG__|__ПОЯСНЕНИЕ__")
_DAB_TITLE = re.compile(r"\((?:disambiguation|пояснение|значения)\)\s*$", re.I)


def is_disambiguation(wikitext: str, title: str) -> bool:
    """True for disambiguation and set-index pages (by template, magic word or title)."""
    if _DAB_TITLE.search(title):
        return True
    if "{{" in wikitext and _DAB_TEMPLATE.search(wikitext):
        return True
    return "__" in wikitext and _DAB_SWITCH.search(wikitext) is not None
