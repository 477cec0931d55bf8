"""The table as an image (``render_mode="rgb_array"``), drawn with numpy alone.

:func:`draw_table` draws a :class:`cardenvs.core.render.TableView` (the record the text render
reads too): a header with the title and the public facts, one panel a seat (name, card count,
role and marks, its latest action or, at the end, its reward; the hand as cards; the seat to
move highlighted), then the piles and the play to beat as cards, and the recent actions and the
result as text.  Letters come from the small 5x7 bitmap font below (upper case; the Chinese
terms of the renders written in pinyin), so the image needs no font files and no imaging
package.  Every position of a game gives an image of one size (:func:`image_size`), as video
recorders need; text or cards that do not fit are cut at the edge.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Optional

import numpy as np

# -- the font ------------------------------------------------------------------------------------
#: 5x7 glyphs: a character, then its seven rows top to bottom ("#" ink, "." paper)
_FONT_ART = """
A .###. #...# #...# ##### #...# #...# #...#
B ####. #...# #...# ####. #...# #...# ####.
C .###. #...# #.... #.... #.... #...# .###.
D ####. #...# #...# #...# #...# #...# ####.
E ##### #.... #.... ####. #.... #.... #####
F ##### #.... #.... ####. #.... #.... #....
G .###. #...# #.... #.### #...# #...# .####
H #...# #...# #...# ##### #...# #...# #...#
I .###. ..#.. ..#.. ..#.. ..#.. ..#.. .###.
J ..### ...#. ...#. ...#. ...#. #..#. .##..
K #...# #..#. #.#.. ##... #.#.. #..#. #...#
L #.... #.... #.... #.... #.... #.... #####
M #...# ##.## #.#.# #.#.# #...# #...# #...#
N #...# #...# ##..# #.#.# #..## #...# #...#
O .###. #...# #...# #...# #...# #...# .###.
P ####. #...# #...# ####. #.... #.... #....
Q .###. #...# #...# #...# #.#.# #..#. .##.#
R ####. #...# #...# ####. #.#.. #..#. #...#
S .#### #.... #.... .###. ....# ....# ####.
T ##### ..#.. ..#.. ..#.. ..#.. ..#.. ..#..
U #...# #...# #...# #...# #...# #...# .###.
V #...# #...# #...# #...# #...# .#.#. ..#..
W #...# #...# #...# #.#.# #.#.# #.#.# .#.#.
X #...# #...# .#.#. ..#.. .#.#. #...# #...#
Y #...# #...# .#.#. ..#.. ..#.. ..#.. ..#..
Z ##### ....# ...#. ..#.. .#... #.... #####
0 .###. #...# #..## #.#.# ##..# #...# .###.
1 ..#.. .##.. ..#.. ..#.. ..#.. ..#.. .###.
2 .###. #...# ....# ...#. ..#.. .#... #####
3 ####. ....# ....# .###. ....# ....# ####.
4 ...#. ..##. .#.#. #..#. ##### ...#. ...#.
5 ##### #.... ####. ....# ....# #...# .###.
6 ..##. .#... #.... ####. #...# #...# .###.
7 ##### ....# ...#. ..#.. .#... .#... .#...
8 .###. #...# #...# .###. #...# #...# .###.
9 .###. #...# #...# .#### ....# ...#. .##..
- ..... ..... ..... ##### ..... ..... .....
+ ..... ..#.. ..#.. ##### ..#.. ..#.. .....
: ..... .##.. .##.. ..... .##.. .##.. .....
. ..... ..... ..... ..... ..... .##.. .##..
, ..... ..... ..... ..... .##.. ..#.. .#...
; ..... .##.. .##.. ..... .##.. ..#.. .#...
( ...#. ..#.. .#... .#... .#... ..#.. ...#.
) .#... ..#.. ...#. ...#. ...#. ..#.. .#...
[ .###. .#... .#... .#... .#... .#... .###.
] .###. ...#. ...#. ...#. ...#. ...#. .###.
# .#.#. .#.#. ##### .#.#. ##### .#.#. .#.#.
/ ..... ....# ...#. ..#.. .#... #.... .....
_ ..... ..... ..... ..... ..... ..... #####
| ..#.. ..#.. ..#.. ..#.. ..#.. ..#.. ..#..
= ..... ..... ##### ..... ##### ..... .....
> .#... ..#.. ...#. ....# ...#. ..#.. .#...
< ...#. ..#.. .#... #.... .#... ..#.. ...#.
! ..#.. ..#.. ..#.. ..#.. ..#.. ..... ..#..
? .###. #...# ....# ...#. ..#.. ..... ..#..
' ..#.. ..#.. .#... ..... ..... ..... .....
" .#.#. .#.#. ..... ..... ..... ..... .....
% ##..# ##..# ...#. ..#.. .#... #..## #..##
* ..... ..#.. #.#.# .###. #.#.# ..#.. .....
\u2605 ..#.. ..#.. ##### .###. .###. .#.#. #...#
"""
GLYPH_W, GLYPH_H = 5, 7
FONT = {line[0]: np.array([[c == "#" for c in row] for row in line[2:].split()], np.bool_)
        for line in _FONT_ART.strip().split("\n")}
STAR = "\u2605"  # the joker's mark
#: the Chinese words of the text renders, as the image writes them
PINYIN = {"娘娘": "niangniang", "头家": "toujia", "末家": "mojia", "活子": "huozi",
          "亮": "liang "}

# -- layout (pixels) and colours -----------------------------------------------------------------
WIDTH = 1024
HEADER_H = 80       # title, facts, one head line
SEAT_H = 68         # one seat's panel
CARD_ROWS, TEXT_ROWS = 3, 6  # the lines below the seats that always fit
CARD_ROW_H, TEXT_ROW_H = 50, 20
CARD_W, CARD_H, CARD_STEP = 30, 42, 21
LEFT_X, CARDS_X = 16, 316    # the label column and the cards
FELT, HEADER, PANEL, PANEL_TURN = (21, 87, 52), (10, 48, 30), (30, 108, 66), (52, 134, 84)
TURN_EDGE, TEXT, LABEL, DIM = (250, 206, 60), (245, 245, 238), (250, 222, 130), (170, 205, 180)
FACE, EDGE, INK = (252, 252, 247), (35, 35, 35), (20, 20, 20)
RED, BLUE = (200, 28, 28), (30, 70, 200)
JOKER_FACE = {"B": (226, 226, 232), "R": (255, 228, 228)}


def image_size(n_players: int) -> tuple:
    """``(height, width)`` of every image of an ``n_players`` table (height a multiple of 16,
    as video encoders want)."""
    if isinstance(n_players, bool) or not isinstance(n_players, (int, np.integer)) or n_players < 1:
        raise ValueError(f"n_players must be a positive int, got {n_players!r}")
    h = HEADER_H + n_players * SEAT_H + CARD_ROWS * CARD_ROW_H + TEXT_ROWS * TEXT_ROW_H + 12
    return -(-h // 16) * 16, WIDTH


def image_text(text: str) -> str:
    """``text`` as the font writes it: the Chinese words in pinyin, upper case, ``?`` for a
    character the font lacks."""
    for word, latin in PINYIN.items():
        text = text.replace(word, latin)
    return "".join(c if c in FONT or c == " " else "?" for c in text.upper())


@lru_cache(maxsize=None)
def _glyph(ch: str, scale: int) -> np.ndarray:
    return np.kron(FONT[ch], np.ones((scale, scale), np.bool_))


def fill(img: np.ndarray, x0: int, y0: int, x1: int, y1: int, color) -> None:
    """Paint the rectangle ``[x0, x1) x [y0, y1)`` of ``img``, cut at its edges."""
    h, w = img.shape[:2]
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
    if x0 < x1 and y0 < y1:
        if (x1 - x0) * (y1 - y0) < 4096:
            img[y0:y1, x0:x1] = color
        else:  # rows of bytes: numpy's broadcast of a pixel over a large area is slow
            img.reshape(h, w * 3)[y0:y1, 3 * x0:3 * x1] = np.tile(np.asarray(color, np.uint8),
                                                                 x1 - x0)


def draw_text(img: np.ndarray, x: int, y: int, text: str, color, scale: int = 2,
              right: Optional[int] = None) -> int:
    """Write ``text`` (through :func:`image_text`) with its top left corner at ``(x, y)``,
    ``scale`` pixels a font pixel, up to ``right`` (default: the image's edge); returns the
    x just after the last character written."""
    h, w = img.shape[:2]
    right = w if right is None else min(right, w)
    adv = (GLYPH_W + 1) * scale
    for ch in image_text(text):
        if x + GLYPH_W * scale > right:
            break
        if ch != " ":
            g = _glyph(ch, scale)
            gy0, gx0 = max(0, -y), max(0, -x)
            gy1, gx1 = min(g.shape[0], h - y), min(g.shape[1], w - x)
            if gy0 < gy1 and gx0 < gx1:
                img[y + gy0:y + gy1, x + gx0:x + gx1][g[gy0:gy1, gx0:gx1]] = color
        x += adv
    return x


def parse_cards(cards: str) -> list[tuple[str, str, bool]]:
    """The cards of a card string as ``(rank, stand_in, gap)`` triples: ``stand_in`` is the
    rank a joker plays as (``"R[6]"``) or ``""``, ``gap`` True for a card after a ``+``
    (``"555+3"``: body, then kickers).  Other characters are skipped."""
    out: list[tuple[str, str, bool]] = []
    gap, i = False, 0
    while i < len(cards):
        c = cards[i]
        if c == "+":
            gap = True
        elif c == "[" and out and "]" in cards[i:]:
            j = cards.index("]", i)
            out[-1] = (out[-1][0], cards[i + 1:j], out[-1][2])
            i = j
        elif c in FONT and c not in " ()[]":
            out.append((c, "", gap))
            gap = False
        i += 1
    return out


@lru_cache(maxsize=None)
def card_sprite(rank: str, stand_in: str = "") -> np.ndarray:
    """The ``(CARD_H, CARD_W, 3)`` picture of one card, its rank in the top left corner (the
    part a fanned hand shows); a joker (``B`` black, ``R`` red) has a star under its letter,
    or the rank it stands in for.  Read-only (cached)."""
    joker = rank in JOKER_FACE
    img = np.empty((CARD_H, CARD_W, 3), np.uint8)
    fill(img, 0, 0, CARD_W, CARD_H, EDGE)
    fill(img, 1, 1, CARD_W - 1, CARD_H - 1, JOKER_FACE[rank] if joker else FACE)
    ink = RED if rank == "R" else INK
    draw_text(img, 3, 4, rank, ink, scale=3)
    if stand_in:
        draw_text(img, 4, 28, stand_in, BLUE, scale=2)
    elif joker:
        draw_text(img, 4, 28, STAR, ink, scale=2)
    img.flags.writeable = False
    return img


def draw_card(img: np.ndarray, x: int, y: int, rank: str, stand_in: str = "") -> None:
    """Paste :func:`card_sprite` with its top left corner at ``(x, y)``, cut at the edges."""
    c = card_sprite(rank, stand_in)
    h, w = img.shape[:2]
    cy0, cx0 = max(0, -y), max(0, -x)
    cy1, cx1 = min(CARD_H, h - y), min(CARD_W, w - x)
    if cy0 < cy1 and cx0 < cx1:
        img[y + cy0:y + cy1, x + cx0:x + cx1] = c[cy0:cy1, cx0:cx1]


def draw_cards(img: np.ndarray, x: int, y: int, cards: str, right: int) -> int:
    """A fanned row of cards from ``(x, y)``, squeezed to end before ``right``; returns the x
    after the row (``x`` for no cards)."""
    cs = parse_cards(cards)
    if not cs:
        return x
    gaps = sum(g for _, _, g in cs[1:])
    span = right - x - CARD_W - gaps * CARD_STEP // 2
    step = CARD_STEP if len(cs) < 2 else max(4, min(CARD_STEP, span // (len(cs) - 1)))
    for k, (rank, stand_in, gap) in enumerate(cs):
        if k and gap:
            x += CARD_STEP // 2
        draw_card(img, x, y, rank, stand_in)
        x += step
    return x - step + CARD_W


def wrap(parts: list, sep: str, width: int) -> list:
    """``parts`` joined by ``sep`` into rows of at most ``width`` characters (a part longer
    than ``width`` gets a row of its own)."""
    rows: list = []
    for p in parts:
        if rows and len(image_text(rows[-1] + sep + p)) <= width:
            rows[-1] += sep + p
        else:
            rows.append(p)
    return rows


def _canvas(n_players: int) -> np.ndarray:
    h, w = image_size(n_players)
    img = np.empty((h, w, 3), np.uint8)
    fill(img, 0, 0, w, h, FELT)
    return img


def draw_message(n_players: int, message: str) -> np.ndarray:
    """An image of the size of an ``n_players`` table with ``message`` in its header (before
    the first deal)."""
    img = _canvas(n_players)
    fill(img, 0, 0, WIDTH, HEADER_H, HEADER)
    draw_text(img, LEFT_X, 30, message, TEXT, scale=2)
    return img


def draw_table(view, n_players: Optional[int] = None) -> np.ndarray:
    """The table of ``view`` (a :class:`cardenvs.core.render.TableView`) as an ``(H, W, 3)``
    ``uint8`` image of :func:`image_size` (``n_players``, default the view's seats)."""
    n = len(view.seats) if n_players is None else n_players
    img = _canvas(n)
    h, w = img.shape[:2]
    fill(img, 0, 0, w, HEADER_H, HEADER)
    draw_text(img, LEFT_X, 8, view.title, TEXT, scale=3)
    rows = wrap(list(view.facts), " | ", (w - 8 - LEFT_X) // ((GLYPH_W + 1) * 2))
    rows = [(r, LABEL) for r in rows] + [(f"{ln.label}: {ln.text}", DIM) for ln in view.head]
    for k, (row, color) in enumerate(rows[:2]):
        draw_text(img, LEFT_X, 38 + 20 * k, row, color, scale=2, right=w - 8)
    for i, s in enumerate(view.seats[:n]):
        y = HEADER_H + i * SEAT_H
        if s.to_move:
            fill(img, 8, y + 2, w - 8, y + SEAT_H - 2, TURN_EDGE)
        fill(img, 11, y + 5, w - 11, y + SEAT_H - 5, PANEL_TURN if s.to_move else PANEL)
        col = CARDS_X - 12
        name = f"{'> ' if s.to_move else ''}player_{s.seat} ({len(parse_cards(s.hand))})"
        draw_text(img, LEFT_X, y + 10, name, TURN_EDGE if s.to_move else TEXT, right=col)
        draw_text(img, LEFT_X, y + 28, " ".join(t for t in (s.role, s.tag) if t), LABEL,
                  right=col)
        if s.reward is not None:
            draw_text(img, LEFT_X, y + 46, f"reward {s.reward:+d}", TEXT, right=col)
        elif s.last:
            draw_text(img, LEFT_X, y + 46, f"last: {s.last}", DIM, right=col)
        draw_cards(img, CARDS_X, y + 13, s.hand, w - 16)
    y = HEADER_H + n * SEAT_H + 6
    for ln in view.lines:
        tall = ln.cards is not None
        if y + (CARD_H if tall else 14) > h:
            break
        if tall:
            draw_text(img, LEFT_X, y + 14, f"{ln.label}:", LABEL, right=CARDS_X - 12)
            end = draw_cards(img, CARDS_X, y, ln.cards, w - 16)
            if not parse_cards(ln.cards):
                draw_text(img, CARDS_X, y + 14, "-", TEXT)
            if ln.note:
                draw_text(img, end + 12, y + 14, ln.note, TEXT, right=w - 8)
            y += CARD_ROW_H
        else:
            x = draw_text(img, LEFT_X, y, f"{ln.label}:", LABEL)
            draw_text(img, x + 12, y, ln.text, TEXT, right=w - 8)
            y += TEXT_ROW_H
    return img
