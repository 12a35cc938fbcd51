"""Dates written in text: each found as written, with its ISO 8601 value; numbers that are no
dates left alone."""

from __future__ import annotations

import pytest

from knownote.study.dates import dates_in, sentence_date


def read(text: str) -> list[tuple[str, str]]:
    return [(text[d.start : d.end], d.date) for d in dates_in(text)]


@pytest.mark.parametrize(
    ("text", "written", "date"),
    [
        ("It opened on March 3, 2021 in Paris.", "March 3, 2021", "2021-03-03"),
        ("It opened on 3 March 2021 in Paris.", "3 March 2021", "2021-03-03"),
        ("It opened in March 2021.", "March 2021", "2021-03"),
        ("Sept. 11, 2001 changed it.", "Sept. 11, 2001", "2001-09-11"),
        ("Released 2021-03-03 at noon.", "2021-03-03", "2021-03-03"),
        ("Am 3. März 2021 begann es.", "3. März 2021", "2021-03-03"),
        ("Il est né le 3 mars 2021.", "3 mars 2021", "2021-03-03"),
        ("Nació el 3 de marzo de 2021.", "3 de marzo de 2021", "2021-03-03"),
        ("Это было 3 марта 2021 года.", "3 марта 2021", "2021-03-03"),
        ("他于2021年3月3日出生。", "2021年3月3日", "2021-03-03"),
        ("会议于2021年3月召开。", "2021年3月", "2021-03"),
        ("该校创建于1902年，位于北京。", "1902年", "1902"),
        ("秦始皇于公元前221年统一六国。", "公元前221年", "-0220"),
        ("In 1998 the act passed.", "1998", "1998"),
        ("Since 1998, the law has changed.", "1998", "1998"),
        ("The 1998 election was close.", "1998", "1998"),
        ("The Copyright Act (1976) was long.", "1976", "1976"),
        ("Seit 1998 gilt das Gesetz.", "1998", "1998"),
        ("В 1998 году закон приняли.", "1998 году", "1998"),
        ("It grew in the 1990s.", "1990s", "1990/1999"),
        ("By the mid-1990s it had grown.", "1990s", "1990/1999"),
        ("Die 1990er Jahre waren anders.", "1990er Jahre", "1990/1999"),
        ("1990年代的音乐。", "1990年代", "1990/1999"),
        ("Printing spread in the 1800s.", "1800s", "1800/1899"),
        ("The war lasted from 1914 to 1918.", "from 1914 to 1918", "1914/1918"),
        ("The war (1914–1918) ended.", "1914–1918", "1914/1918"),
        ("The war of 1914-18 ended.", "1914-18", "1914/1918"),
        ("It happened between 1998 and 2004.", "between 1998 and 2004", "1998/2004"),
        ("第一次世界大战从1914年至1918年。", "1914年至1918", "1914/1918"),
        ("In the 19th century, cities grew.", "19th century", "1801/1900"),
        ("In the nineteenth century, cities grew.", "nineteenth century", "1801/1900"),
        ("Im 19. Jahrhundert wuchsen die Städte.", "19. Jahrhundert", "1801/1900"),
        ("19世纪的欧洲城市迅速发展。", "19世纪", "1801/1900"),
        ("二十世纪初，城市迅速发展。", "二十世纪", "1901/2000"),
        ("Au XIXe siècle, les villes ont grandi.", "XIXe siècle", "1801/1900"),
        ("В XIX веке города росли.", "XIX веке", "1801/1900"),
        ("It began in early 1998.", "early 1998", "1998"),
    ],
)
def test_a_date_is_read_as_written(text, written, date):
    assert read(text)[0] == (written, date)


@pytest.mark.parametrize(
    "text",
    [
        "A total of 1500 people came.",
        "The town has 2000 inhabitants and 1998 cars.",
        "It cost $1999 in all.",
        "See pp. 1200–1250 of the report.",
        "About 1,000 men and 1,998 women.",
        "They counted 1998 votes.",
        "In 2000 cases the test failed.",
        "The population of 1850 was small.",
        "The history spans 2000多年.",
        "经过500年的发展。",
        "they may 2004 again",
        "Call 555-1998 now.",
        "Version 3.1998 was released.",
        "The result was 1998.5 units.",
    ],
)
def test_numbers_that_are_no_dates_are_left_alone(text):
    assert read(text) == []


def test_the_longest_reading_of_a_place_wins():
    assert read("On March 3, 2021 and in 1998.") == [
        ("March 3, 2021", "2021-03-03"),
        ("1998", "1998"),
    ]


def test_an_impossible_day_is_no_date():
    assert read("On February 30, 2021 it rained.") == []


@pytest.mark.parametrize(
    "row",
    [
        "1998 1999 2000 2001 2002 2003",
        "Year 1998 1999 2000 2001",
        "2001 2002 2003 2004 in millions",
    ],
)
def test_a_row_of_years_is_no_dated_sentence(row):
    assert sentence_date(row, 0, len(row)) is None


def test_a_sentence_says_its_first_date():
    sentence = "After the war ended in 1918, the treaty of 1919 followed."
    found = sentence_date(sentence, 0, len(sentence))
    assert found is not None and found.date == "1918"
