"""Which server's model a name means: a bare name listed by one server only is that one's."""

import pytest

from knownote.answer.servers import resolve_model
from knownote.errors import ModelError


def test_a_bare_name_only_the_openai_server_lists_is_its_model():
    assert resolve_model("tiny", ["openai:tiny"]) == "openai:tiny"


def test_a_name_ollama_lists_stays_ollamas():
    assert resolve_model("llama3", ["llama3", "openai:tiny"]) == "llama3"


def test_a_prefixed_name_is_taken_as_written():
    assert resolve_model("openai:tiny", ["tiny", "openai:tiny"]) == "openai:tiny"


def test_an_unlisted_name_is_left_for_the_server_to_refuse():
    assert resolve_model("missing", ["openai:tiny"]) == "missing"


def test_a_name_both_servers_list_asks_which():
    with pytest.raises(ModelError, match="Choose tiny for Ollama's, or openai:tiny"):
        resolve_model("tiny", ["tiny", "openai:tiny"])


def test_no_name_is_the_first_listed_model_or_none():
    assert resolve_model(None, ["llama3", "openai:tiny"]) == "llama3"
    assert resolve_model(None, []) is None
