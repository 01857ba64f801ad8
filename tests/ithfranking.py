"""A realistic ITHF world ranking for tests, laid out as the ITHF publishes `ranking.txt`:
a title with the date (d.m.yyyy), the header, then one tab-separated line a player, 7 fields
(rank, ITHF id, name, club, nation, points, player value); ranks shared on equal points;
names without diacritics, first name first, a few with a nickname in quotes or `ml.`/`st.`;
`???` for an unknown club, an empty nation (a few a NUL byte). Made from a seed so every run
writes the same file. Imported, never collected."""

from __future__ import annotations

import random
import unicodedata
from pathlib import Path

HEADER = "Rank\tID_Player\tPlayer\tClub\tNation\tPoints\tPlayer_Value"
DAY = "12.5.2026"
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


NICKNAMES = ["The Cobra", "Iceman", "Doc", "The Wall", "Bomber"]


def plain(name: str) -> str:
    """The name as the ranking writes it: without diacritics."""
    name = name.replace("ł", "l").replace("Ł", "L").replace("ø", "o").replace("Ø", "O")
    name = name.replace("ß", "ss")
    return "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c))


def line(rank: int | str, ident: int, name: str, club: str, nation: str, points: int) -> str:
    """One player's line: 7 tab-separated fields."""
    return f"{rank}\t{ident}\t{name}\t{club}\t{nation}\t{points}\t{points * 3 // 2}"


def lines(count: int = 7850, seed: int = 33) -> list[str]:
    """The players' lines, best first: points falling, equal points a shared rank (1, 2, 2,
    4 …), every name unique (namesakes as the file tells them apart: `ml.`, `st.`)."""
    rng = random.Random(seed)
    nations = list(SURNAMES)
    seen: set[str] = set()
    out: list[str] = []
    points, rank = 12000, 1
    for i in range(count):
        nation = rng.choice(nations)
        name = plain(f"{rng.choice(FIRST[nation])} {rng.choice(SURNAMES[nation])}")
        if name in seen:
            name = f"{name} {i}"
        seen.add(name)
        if i % 97 == 13:
            name = f'{name} "{rng.choice(NICKNAMES)}"'
        club, country = rng.choice(CLUBS) or "???", nation
        if club == "???":
            country = "" if i % 5 else "\0"
        drop = rng.choice((0, 1, 1, 2, 2, 3)) if 0 < i < count - 40 else 0  # the last: tied
        if drop:  # equal points: a shared rank
            points, rank = points - drop, i + 1
        out.append(line(rank, 10000 + i * 7, name, club, country, points))
    return out


def text(rows: list[str], day: str = DAY) -> str:
    return f"Table hockey ranking up to {day}\n{HEADER}\n" + "\n".join(rows) + "\n"


def write(path: Path, count: int = 7850, seed: int = 33) -> Path:
    path.write_text(text(lines(count, seed)), encoding="utf-8")
    return path
