"""Draw docs/wiring.svg: the box's default wiring on the Pi's 40-pin header, from the same
defaults the program uses (timekeeper/config.py), so the picture cannot disagree with them.

    .venv/bin/python scripts/draw_wiring.py [docs/wiring.svg]
"""

from __future__ import annotations

import sys
from pathlib import Path

from timekeeper.box.wiring import BUTTONS, default_gpio

# physical pin -> name, for the pins the picture labels
HEADER = {
    1: "3V3",
    2: "5V",
    3: "GPIO2",
    4: "5V",
    5: "GPIO3",
    6: "GND",
    7: "GPIO4",
    8: "GPIO14",
    9: "GND",
    10: "GPIO15",
    11: "GPIO17",
    12: "GPIO18",
    13: "GPIO27",
    14: "GND",
    15: "GPIO22",
    16: "GPIO23",
    17: "3V3",
    18: "GPIO24",
    19: "GPIO10",
    20: "GND",
    21: "GPIO9",
    22: "GPIO25",
    23: "GPIO11",
    24: "GPIO8",
    25: "GND",
    26: "GPIO7",
    27: "GPIO0",
    28: "GPIO1",
    29: "GPIO5",
    30: "GND",
    31: "GPIO6",
    32: "GPIO12",
    33: "GPIO13",
    34: "GND",
    35: "GPIO19",
    36: "GPIO16",
    37: "GPIO26",
    38: "GPIO20",
    39: "GND",
    40: "GPIO21",
}
PHYSICAL = {name: pin for pin, name in HEADER.items() if name.startswith("GPIO")}

W, H = 1060, 680
HX, HY, STEP = 500, 84, 24  # header: left column x, first row y, row pitch
INK, MUTED, ACCENT, OPTIONAL = "#222", "#777", "#c0392b", "#999"

LABELS = {
    "start": "START / NEXT  (hold 3 s: reset)",
    "toggle": "STOP / RESUME  (hold 2 s: finish)",
    "add": "ADD TIME  (hold 1 s: take back)",
    "subtract": "SUBTRACT  (optional)",
    "reset": "RESET, held 3 s  (optional)",
}
OPTIONAL_PINS = {"subtract": 5, "reset": 6}


def pin_xy(pin: int) -> tuple[float, float]:
    row = (pin - 1) // 2
    return (HX if pin % 2 else HX + 26), HY + row * STEP


def text(
    x: float,
    y: float,
    s: str,
    size: int = 13,
    anchor: str = "start",
    fill: str = INK,
    weight: str = "normal",
) -> str:
    return (
        f'<text x="{x}" y="{y}" font-size="{size}" text-anchor="{anchor}" fill="{fill}" '
        f'font-weight="{weight}">{s}</text>'
    )


def line(*points: tuple[float, float], color: str = INK, dash: bool = False) -> str:
    d = " ".join(f"{x},{y}" for x, y in points)
    extra = ' stroke-dasharray="5,4"' if dash else ""
    return f'<polyline points="{d}" fill="none" stroke="{color}" stroke-width="2"{extra}/>'


def button(x: float, y: float, color: str) -> str:
    """A push button between (x, y) and (x + 40, y)."""
    return "".join(
        [
            f'<circle cx="{x}" cy="{y}" r="3" fill="{color}"/>',
            f'<circle cx="{x + 40}" cy="{y}" r="3" fill="{color}"/>',
            line((x - 2, y - 10), (x + 42, y - 10), color=color),
            line((x + 20, y - 10), (x + 20, y - 20), color=color),
            line((x + 12, y - 20), (x + 28, y - 20), color=color),
        ]
    )


def header() -> list[str]:
    out = [
        f'<rect x="{HX - 14}" y="{HY - 16}" width="54" height="{20 * STEP + 8}" rx="4" '
        f'fill="#2e7d32" opacity="0.15" stroke="#2e7d32"/>',
        text(HX + 13, HY - 26, "Raspberry Pi 40-pin header", 13, "middle", weight="bold"),
    ]
    for pin, name in HEADER.items():
        x, y = pin_xy(pin)
        fill = "#000" if name == "GND" else ("#d35400" if name in ("5V", "3V3") else "#fff")
        out.append(f'<circle cx="{x}" cy="{y}" r="7" fill="{fill}" stroke="{INK}"/>')
        out.append(text(x, y + 4, str(pin), 8, "middle", "#fff" if name == "GND" else INK))
    return out


def left_side() -> list[str]:
    """Buttons: each from its GPIO to ground (the internal pull-up holds the pin high)."""
    out: list[str] = []
    rail_x = 60
    gx, gy = pin_xy(39)  # GND
    out.append(
        line(
            (gx, gy),
            (gx - 40, gy),
            (gx - 40, HY + 21 * STEP),
            (rail_x, HY + 21 * STEP),
            (rail_x, HY + 2 * STEP),
        )
    )
    out.append(text(rail_x - 6, HY + 2 * STEP - 8, "GND", 12, "start", weight="bold"))
    pins = {b.name: b.pin for b in default_gpio().buttons} | OPTIONAL_PINS
    for name in BUTTONS:
        gpio = pins[name]
        physical = PHYSICAL[f"GPIO{gpio}"]
        x, y = pin_xy(physical)
        optional = name in OPTIONAL_PINS
        color = OPTIONAL if optional else INK
        out.append(line((x - 8, y), (340, y), color=color, dash=optional))
        out.append(button(300, y, color))
        out.append(line((300, y), (rail_x, y), color=color, dash=optional))
        out.append(f'<circle cx="{rail_x}" cy="{y}" r="3" fill="{INK}"/>')
        out.append(text(350, y - 5, f"GPIO{gpio} (pin {physical})", 11, fill=MUTED))
        out.append(text(72, y - 5, LABELS[name], 12, fill=color))
    out.append(
        text(
            20,
            H - 36,
            "Buttons: one leg to the GPIO, the other to any GND pin; no "
            "resistor (the Pi's internal pull-up is used).",
            12,
        )
    )
    return out


def right_side() -> list[str]:
    out: list[str] = []
    gpio = default_gpio()
    assert gpio.lamp is not None
    # lamp: GPIO23 -> 330 ohm -> LED -> GND (pin 20)
    lamp_pin = PHYSICAL[f"GPIO{gpio.lamp.pin}"]
    x, y = pin_xy(lamp_pin)
    out.append(line((x + 8, y), (620, y)))
    out.append(
        f'<rect x="620" y="{y - 7}" width="50" height="14" fill="#fff" stroke="{INK}" '
        f'stroke-width="2"/>'
    )
    out.append(text(645, y - 12, "330 Ω", 11, "middle"))
    out.append(line((670, y), (710, y)))
    out.append(
        f'<polygon points="710,{y - 10} 710,{y + 10} 730,{y}" fill="{ACCENT}" stroke="{INK}"/>'
    )
    out.append(line((730, y - 10), (730, y + 10)))
    out.append(line((730, y), (960, y), (960, y + 88)))
    out.append(text(700, y - 18, "status lamp (LED)", 12, weight="bold"))
    out.append(text(750, y + 18, f"GPIO{gpio.lamp.pin} (pin {lamp_pin})", 11, fill=MUTED))
    # horn relay module: IN <- GPIO24, VCC <- 5V (pin 2), GND <- GND (pin 20)
    rx, ry = 700, HY + 11 * STEP
    out.append(
        f'<rect x="{rx}" y="{ry}" width="170" height="90" rx="6" fill="#fff" '
        f'stroke="{INK}" stroke-width="2"/>'
    )
    out.append(text(rx + 85, ry + 20, "relay module (optional)", 12, "middle", weight="bold"))
    out.append(text(rx + 85, ry + 38, "switches the hall horn", 11, "middle", fill=MUTED))
    for i, (label, pin) in enumerate((("IN", 18), ("VCC", 2), ("GND", 20))):
        py = ry + 56 + i * 13
        px, pyy = pin_xy(pin)
        out.append(text(rx + 8, py + 4, label, 10))
        color = {"IN": INK, "VCC": "#d35400", "GND": INK}[label]
        mid = 660 + i * 12
        out.append(line((px + 8, pyy), (mid, pyy), (mid, py), (rx, py), color=color, dash=True))
    out.append(
        text(
            rx, ry + 112, "horn: GPIO24 (pin 18), on for 2 s at end and period_end", 11, fill=MUTED
        )
    )
    gx, gy = pin_xy(20)
    out.append(
        line(
            (gx + 8, gy), (620, gy), (620, HY + 9 * STEP + 40), (960, HY + 9 * STEP + 40), color=INK
        )
    )
    out.append(text(966, HY + 9 * STEP + 44, "GND", 12, weight="bold"))
    out.append(
        text(
            20,
            H - 16,
            "Lamp: LED with a 330 Ω resistor, or a 12 V lamp through a "
            "transistor or relay. Horn: on the relay's COM/NO contacts; a mains horn "
            "only through a relay rated for it.",
            12,
        )
    )
    return out


def svg() -> str:
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
        f'viewBox="0 0 {W} {H}" font-family="DejaVu Sans, Arial, sans-serif">',
        f'<rect width="{W}" height="{H}" fill="#fff"/>',
        text(
            20,
            28,
            "timekeeper box: default wiring (BCM numbers; "
            "change pins in /etc/timekeeper/config.yaml)",
            15,
            weight="bold",
        ),
    ]
    parts += left_side() + right_side() + header()
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/wiring.svg")
    out.write_text(svg(), encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
