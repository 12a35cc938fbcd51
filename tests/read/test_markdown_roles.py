"""Roles of Markdown, from markdown-it's parse of the source (which is the text itself)."""

from __future__ import annotations

from knownote.read.extract import extract
from knownote.read.extracted import Extracted
from knownote.read.markdown import markdown_roles
from knownote.read.roles import BODY
from tests.conftest import corpus_file
from tests.read.test_html_roles import assert_ranges, roles_of


def read(relative: str) -> Extracted:
    path = corpus_file(f"docs/web_text/{relative}")
    return extract(path.read_bytes(), path.name)


NOTE = """# 分布式训练

数据并行把**模型**复制到每块显卡上。

| 方法 | 显存 |
| --- | --- |
| ZeRO-3 | 最少 |

```python
model = FSDP(model)
```

    torchrun --nproc_per_node=8 train.py

- 切分数据
- 同步梯度
  1. 先归约
  2. 再广播

> 引用的话仍是正文。

![图片](./img/zero.png)

详见文档[^1]和[官网][site]。

[^1]: 张三（2020）。分布式训练。

[site]: https://www.deepspeed.ai "DeepSpeed"

## 参考文献

- Rajbhandari 等（2020）。ZeRO。
"""


def test_a_chinese_note_has_its_table_code_lists_figure_and_definitions():
    note = extract(NOTE.encode(), "笔记.md")
    assert note.text == NOTE.strip()
    assert_ranges(note)
    assert roles_of(note, "数据并行把**模型**复制到每块显卡上。") == {BODY}
    assert roles_of(note, "| ZeRO-3 | 最少 |") == {"table"}
    assert roles_of(note, "model = FSDP(model)") == {"code"}
    assert roles_of(note, "```python") == {"code"}  # the fence is the block's
    assert roles_of(note, "torchrun --nproc_per_node=8 train.py") == {"code"}
    assert roles_of(note, "- 切分数据\n- 同步梯度\n  1. 先归约\n  2. 再广播") == {"list"}
    assert roles_of(note, "> 引用的话仍是正文。") == {BODY}
    assert roles_of(note, "![图片](./img/zero.png)") == {"figure"}
    assert roles_of(note, "详见文档[^1]和[官网][site]。") == {BODY}
    assert roles_of(note, "[^1]: 张三（2020）。分布式训练。") == {"footnote"}
    assert roles_of(note, '[site]: https://www.deepspeed.ai "DeepSpeed"') == {"footnote"}
    assert roles_of(note, "分布式训练", after="# ") == {"heading"}
    assert roles_of(note, "Rajbhandari 等（2020）。ZeRO。") == {"reference"}  # not a list


def test_the_corpus_notes():
    zh = read("md_zh_distributed_training_notes.md")
    assert_ranges(zh)
    assert roles_of(zh, "分布式训练技术原理") == {"heading"}
    assert roles_of(zh, "FSDP算法是由来自DeepSpeed的ZeroRedundancyOptimizer技术驱动的") == {"list"}
    assert roles_of(zh, "![图片](./img/分布式训练技术原理-幕布图片-57107-679259.jpg)") == {"figure"}
    code = read("md_codeblocks.md")
    assert_ranges(code)
    assert roles_of(code, "<!DOCTYPE html>") == {"code"}
    assert roles_of(code, "<from>Jani</from>") == {"code"}
    assert roles_of(code, "HTML Example") == {"heading"}
    hill = read("md_wikipedia_gravity_hill.md")
    assert_ranges(hill)
    assert roles_of(hill, "[List of gravity hills]") == {"navigation"}  # under "See also"
    # a quote to its reader; a hatnote once stored (knownote.read.roles.hatnotes)
    assert roles_of(hill, '"Magnetic hill" and "Mystery hill" redirect here.') == {BODY}


def test_ranges_are_whole_lines_without_their_edges_white_space():
    text = "Intro.\n\n  - one\n  - two\n\nOutro."
    assert [(text[r.start : r.end], r.role) for r in markdown_roles(text)] == [
        ("- one", "list"),
        ("- two", "list"),
    ]
