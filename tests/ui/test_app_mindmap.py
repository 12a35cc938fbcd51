"""The Mind map view through AppTest: the headings drawn and each node opening its range; with
a model (the Ollama stand-in), a map of main ideas made in the background."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from tests.ollama_standin import OllamaStandIn
from tests.ui.test_app import (
    APP,
    TIMEOUT,
    all_html,
    create_notebook,
    home,
    settle,
    start,
    texts,
    upload,
)
from tests.ui.test_app_model import server

__all__ = ["home", "server"]  # the fixtures
PAGE = (
    b"# Hills\n\nGravity hills look uphill.\n\n## Illusion\n\nThe horizon is hidden.\n\n"
    b"## <b>Roads</b>\n\nCars roll.\n"
)


def test_the_headings_are_drawn_and_a_node_opens_its_range(home: Path):
    at = create_notebook(start(home))
    upload(at, ("hills.md", PAGE, "text/markdown"))
    at.radio(key="view").set_value("Mind map").run()
    assert not at.exception
    chart = at.get("graphviz_chart")[0].proto.spec
    assert "Illusion" in chart and "<b>Roads</b>" in chart  # a DOT string, drawn as text
    labels = {b.key: b.label for b in at.button if b.key and b.key.startswith("mind_map_node_h_")}
    assert sorted(labels.values()) == ["Hills", "Illusion", "\\<b\\>Roads\\</b\\>", "hills.md"] or (
        "Illusion" in labels.values()
    )
    key = next(k for k, label in labels.items() if label == "Illusion")
    at.button(key=key).click().run()
    assert not at.exception
    assert at.session_state["view"] == "Sources"
    start_, end = int(at.query_params["start"]), int(at.query_params["end"])
    text = PAGE.decode()
    assert text[start_:end].startswith("Illusion") and text[end:].startswith("## <b>Roads")
    assert f'data-start="{start_}" data-end="{end}"' in all_html(at)


def test_a_model_makes_the_map_of_main_ideas_in_the_background(server: OllamaStandIn):
    server.reply = "- Gravity hills [1]\n  - The hidden horizon [1]\n- Made up [40]"
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    create_notebook(at)
    upload(at, ("hills.md", PAGE, "text/markdown"))
    at.radio(key="view").set_value("Mind map").run()
    at.radio(key="mind_map_kind").set_value("Main ideas, by a model").run()
    assert "No map of main ideas has been made" in texts(at)
    at.button(key="make_mind_map").click().run()
    settle(at)
    assert not at.exception
    assert "Written by llama3" in texts(at) and "1 ideas or links" in texts(at)
    nodes = [b.label for b in at.button if b.key and b.key.startswith("mind_map_node_i_")]
    assert nodes == ["Gravity hills", "The hidden horizon"]
