"""A realistic ITHF world ranking for tests: the tab-separated `ranking.txt` the ITHF
publishes (rank, id, name, club, nation; about 7,800 lines, names "Surname Firstname",
many with diacritics), made from a seed so every run writes the same file. Imported, never
collected."""

from __future__ import annotations

import random
from pathlib import Path

SURNAMES = {
    "CZE": [
        "Novák",
        "Dvořák",
        "Černý",
        "Procházka",
        "Kučera",
        "Veselý",
        "Horák",
        "Němec",
        "Pokorný",
        "Marek",
        "Růžička",
        "Šťastný",
        "Žák",
        "Kříž",
        "Hájek",
    ],
    "SVK": ["Horváth", "Kováč", "Varga", "Tóth", "Baláž", "Lukáč", "Šimko", "Ďurica"],
    "SWE": ["Johansson", "Åberg", "Öberg", "Lindström", "Söderberg", "Ekström", "Nyström"],
    "FIN": ["Virtanen", "Mäkinen", "Hämäläinen", "Könönen", "Järvinen", "Lähteenmäki"],
    "LAT": ["Bērziņš", "Kalniņš", "Ozoliņš", "Liepiņš", "Krūmiņš", "Zariņš"],
    "RUS": ["Ivanov", "Smirnov", "Kuznetsov", "Popov", "Sokolov", "Lebedev"],
    "NOR": ["Hansen", "Johansen", "Sørensen", "Østby", "Fylling", "Hægeland"],
    "GER": ["Müller", "Schäfer", "Weiß", "Groß", "Köhler", "Fuchs"],
    "POL": ["Łukasik", "Wiśniewski", "Wójcik", "Kamiński", "Żuk", "Nowak"],
}
FIRST = {
    "CZE": ["Jan", "Petr", "Jiří", "Tomáš", "Lukáš", "Ondřej", "Jakub", "Radek", "Zdeněk"],
    "SVK": ["Ján", "Peter", "Michal", "Ľubomír", "Martin", "Juraj"],
    "SWE": ["Erik", "Lars", "Björn", "Göran", "Anders", "Måns"],
    "FIN": ["Mikko", "Jari", "Jyrki", "Päivi", "Antti", "Sami"],
    "LAT": ["Jānis", "Andris", "Kārlis", "Māris", "Edgars"],
    "RUS": ["Ivan", "Oleg", "Dmitry", "Sergey", "Alexey"],
    "NOR": ["Amund", "Øyvind", "Håkon", "Lars", "Ståle"],
    "GER": ["Jürgen", "Uwe", "Jörg", "Stefan", "Sören"],
    "POL": ["Łukasz", "Paweł", "Michał", "Grzegorz", "Wojciech"],
}
CLUBS = [
    "THC Praha",
    "SK Kladno",
    "HC Tygr",
    "Stiga Stockholm",
    "Helsinki TH",
    "Riga HT",
    "Oslo BHK",
    "Moskva",
    "Berlin Tischhockey",
    "Kraków",
    "",
]


def lines(count: int = 7800, seed: int = 33) -> list[str]:
    """The ranking's lines, best first: rank, ITHF id, "Surname Firstname", club, nation."""
    rng = random.Random(seed)
    nations = list(SURNAMES)
    seen: set[str] = set()
    out: list[str] = []
    while len(out) < count:
        nation = rng.choice(nations)
        name = f"{rng.choice(SURNAMES[nation])} {rng.choice(FIRST[nation])}"
        if name in seen:
            name = f"{name} {len(out)}"  # the real file, too, tells namesakes apart
        seen.add(name)
        rank = len(out) + 1
        out.append(f"{rank}\t{10000 + rng.randrange(90000)}\t{name}\t{rng.choice(CLUBS)}\t{nation}")
    return out


def write(path: Path, count: int = 7800, seed: int = 33) -> Path:
    path.write_text("\n".join(lines(count, seed)) + "\n", encoding="utf-8")
    return path
