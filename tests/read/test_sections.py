from knownote.read.sections import Heading, heading_text, section_paths

TEXT = (
    "Paper\n\n1 Intro\n\nHello.\n\n2 Method\n\n2.1  Data\n\nRows.\n\n"
    "2.2 Training\n\nSteps.\n\n3 End"
)


def heading(words: str, level: int) -> Heading:
    start = TEXT.index(words)
    return Heading(start, start + len(words), level)


HEADINGS = [
    heading("1 Intro", 1),
    heading("2 Method", 1),
    heading("2.1  Data", 2),
    heading("2.2 Training", 2),
    heading("3 End", 1),
]


def test_before_the_first_heading_the_path_is_empty():
    assert section_paths(TEXT, HEADINGS, [0]) == [""]


def test_a_subsection_carries_its_parents():
    offsets = [TEXT.index("Rows."), TEXT.index("Steps.")]
    assert section_paths(TEXT, HEADINGS, offsets) == [
        "2 Method › 2.1 Data",
        "2 Method › 2.2 Training",
    ]


def test_a_heading_of_the_same_level_closes_the_section():
    assert section_paths(TEXT, HEADINGS, [TEXT.index("3 End")]) == ["3 End"]


def test_a_passage_that_starts_with_a_heading_is_in_it():
    assert section_paths(TEXT, HEADINGS, [TEXT.index("1 Intro")]) == ["1 Intro"]


def test_a_heading_reads_on_one_line():
    assert heading_text(TEXT, heading("2.1  Data", 2)) == "2.1 Data"


def test_no_headings_no_paths():
    assert section_paths(TEXT, [], [0, 10]) == ["", ""]


def test_a_heading_marked_up_on_its_line_counts_from_the_line_start():
    text = "# Title\n\nWords."
    assert section_paths(text, [Heading(2, 7, 1)], [0]) == ["Title"]
