"""Extracting a solution from a model's reply.

Replies are untrusted text: anything may arrive, from an empty string to
megabytes of junk. :func:`extract` never raises; it returns an
:class:`Extraction` that either holds the code and says which block was chosen
and why, or names a failure:

- ``no_code``: no fenced code block, and the reply as a whole is not Python;
- ``no_model_new``: code is there, but none of it defines ``ModelNew`` at
  module level;
- ``unparsable``: a candidate mentions ``class ModelNew`` but none parses as
  Python. The last such block is still returned in ``code`` (the judge's
  ``compile_error`` for it carries the syntax error, useful feedback for a
  refinement turn); ``ok`` is False.

How the block is chosen (docs/prompts.md):

1. fenced blocks (``` or ~~~, three or more, any or no language tag, any
   indentation, CRLF or CR line endings; a block left open at the end of the
   reply runs to the end);
2. of the blocks that parse with ``ast`` and define ``ModelNew`` at module
   level, the last complete (closed) one; failing that, the last unclosed one;
3. failing that, the last block that mentions ``class ModelNew`` (``unparsable``);
4. with no fences at all, the whole reply, when it parses and defines ``ModelNew``.

For the repository track a reply's answer is a unified diff (:func:`extract_patch`):
the fenced blocks that hold a diff's file headers (``diff --git`` or ``---``/``+++``),
each a patch to the files it names; a later block naming a file an earlier one named
replaces that earlier block (a patch restated), and the blocks left are joined in
order (a patch split over blocks). With no such block, the reply from its first file
header on. Whether the result applies is git's to say, when it is judged (a
``compile_error`` with git's message): nothing here parses hunks.
"""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass, field
from typing import Any

FAILURES = {
    "no_code": "the reply holds no fenced code block and is not Python as a whole",
    "no_model_new": "the reply holds code, but none of it defines ModelNew at module level",
    "unparsable": "code mentioning class ModelNew was found, but none of it parses as Python",
    "no_diff": "the reply holds no unified diff (no ---/+++ or diff --git file headers)",
}

# Blocks larger than this are never handed to the parser (a reply is untrusted;
# a real solution is a few kilobytes).
MAX_PARSE_CHARS = 1_000_000

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_MENTION = re.compile(r"\bclass\s+ModelNew\b")


@dataclass(frozen=True)
class Block:
    """One fenced block of the reply."""

    index: int  # 0-based, in reply order
    language: str  # first word of the info string, lower-cased; "" if none
    code: str
    first_line: int  # 1-based line of the opening fence
    last_line: int  # 1-based line of the closing fence (or the reply's last line)
    closed: bool
    parses: bool = False  # only examined for blocks that name ModelNew
    defines_model_new: bool = False
    mentions_model_new: bool = False
    error: str = ""  # why it does not parse, if it does not


@dataclass(frozen=True)
class Extraction:
    """What was taken from a reply, or why nothing could be."""

    code: str | None
    failure: str | None  # None, or a key of FAILURES
    message: str  # why this block, or what is wrong
    chosen: int | None = None  # index into blocks; None for the whole reply or nothing
    how: str = ""  # "fenced", "fenced-unclosed", "whole-reply", "mention-only" or ""
    blocks: list[Block] = field(default_factory=list)
    reply_chars: int = 0

    @property
    def ok(self) -> bool:
        return self.failure is None and self.code is not None

    def to_dict(self) -> dict[str, Any]:
        """A summary for the run store (the code itself is stored as the solution)."""
        return {
            "ok": self.ok,
            "failure": self.failure,
            "message": self.message,
            "chosen": self.chosen,
            "how": self.how,
            "blocks": len(self.blocks),
            "reply_chars": self.reply_chars,
        }


def _as_text(reply: Any) -> str:
    if reply is None:
        return ""
    if isinstance(reply, str):
        return reply
    if isinstance(reply, (bytes, bytearray, memoryview)):
        return bytes(reply).decode("utf-8", errors="replace")
    try:
        return str(reply)
    except Exception:
        return ""


def _strip_indent(lines: list[str], indent: str) -> list[str]:
    """Remove the opening fence's indentation from the block's lines (as
    CommonMark does), never more than each line has."""
    if not indent:
        return lines
    width = len(indent.expandtabs(4))
    out = []
    for line in lines:
        expanded = line.expandtabs(4)
        lead = len(expanded) - len(expanded.lstrip(" "))
        out.append(expanded[min(lead, width):])
    return out


def find_blocks(text: str) -> list[Block]:
    """Every fenced block of ``text`` (line endings already normalised)."""
    lines = text.split("\n")
    blocks: list[Block] = []
    i = 0
    n = len(lines)
    while i < n:
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, info, indent = m.group("fence"), m.group("info"), m.group("indent")
        if fence[0] == "`" and "`" in info:
            # ``` followed by more backticks on the line is inline code, not a fence.
            i += 1
            continue
        start = i
        j = i + 1
        closed = False
        while j < n:
            c = _FENCE.match(lines[j])
            if (
                c
                and c.group("fence")[0] == fence[0]
                and len(c.group("fence")) >= len(fence)
                and not c.group("info").strip()
            ):
                closed = True
                break
            j += 1
        body = _strip_indent(lines[start + 1 : j], indent)
        words = info.strip().lstrip("{.").split()
        language = words[0].rstrip("}").lower() if words else ""
        blocks.append(
            Block(
                index=len(blocks),
                language=language,
                code="\n".join(body).strip("\n") + "\n",
                first_line=start + 1,
                last_line=min(j + 1, n),
                closed=closed,
            )
        )
        i = j + 1
    return blocks


def _defines_model_new(body: list[ast.stmt]) -> bool:
    for node in body:
        if isinstance(node, ast.ClassDef) and node.name == "ModelNew":
            return True
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "ModelNew" for t in targets):
                return True
        if isinstance(node, ast.ImportFrom) and any(
            (a.asname or a.name) == "ModelNew" for a in node.names
        ):
            # from elsewhere import ModelNew: names it, but the code is not here.
            continue
        inner: list[ast.stmt] = []
        if isinstance(node, ast.If):
            inner = node.body + node.orelse
        elif isinstance(node, ast.Try):
            inner = node.body + node.orelse + node.finalbody
            for handler in node.handlers:
                inner += handler.body
        elif isinstance(node, ast.With):
            inner = node.body
        if inner and _defines_model_new(inner):
            return True
    return False


def _parse(code: str) -> tuple[ast.Module | None, str]:
    if len(code) > MAX_PARSE_CHARS:
        return None, f"too large to parse ({len(code)} characters > {MAX_PARSE_CHARS})"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning for odd escapes
            return ast.parse(code), ""
    except SyntaxError as exc:
        return None, f"SyntaxError: {exc.msg} (line {exc.lineno})"
    except Exception as exc:  # ValueError (NUL bytes), RecursionError, MemoryError
        return None, f"{type(exc).__name__}: {exc}"


def _examine(block: Block) -> Block:
    mentions = bool(_MENTION.search(block.code))
    if "ModelNew" not in block.code:
        return block
    tree, error = _parse(block.code)
    if tree is None:
        return _replace(block, mentions_model_new=mentions, error=error)
    return _replace(
        block,
        parses=True,
        defines_model_new=_defines_model_new(tree.body),
        mentions_model_new=mentions,
    )


def _replace(block: Block, **changes: Any) -> Block:
    fields = dict(block.__dict__)
    fields.update(changes)
    return Block(**fields)


def _describe(block: Block, total: int) -> str:
    lang = block.language or "no language tag"
    return f"block {block.index + 1} of {total} ({lang}, lines {block.first_line}-{block.last_line})"


def extract(reply: Any) -> Extraction:
    """The solution in ``reply``; never raises."""
    try:
        return _extract(reply)
    except Exception as exc:  # a defect of ours must not end a run
        return Extraction(
            code=None,
            failure="no_code",
            message=f"extraction failed unexpectedly: {type(exc).__name__}: {exc}",
        )


def _extract(reply: Any) -> Extraction:
    text = _as_text(reply).replace("\r\n", "\n").replace("\r", "\n")
    size = len(text)
    if not text.strip():
        return Extraction(None, "no_code", "the reply is empty", reply_chars=size)

    blocks = [_examine(b) for b in find_blocks(text)]
    total = len(blocks)

    if blocks:
        defining = [b for b in blocks if b.parses and b.defines_model_new]
        closed = [b for b in defining if b.closed]
        if closed:
            b = closed[-1]
            why = "the last complete block that parses and defines ModelNew"
            if len(defining) > 1:
                why += f" ({len(defining)} blocks define it)"
            return Extraction(b.code, None, f"{_describe(b, total)}: {why}", b.index, "fenced", blocks, size)
        if defining:
            b = defining[-1]
            why = "parses and defines ModelNew, but its closing fence is missing (reply cut short?)"
            return Extraction(
                b.code, None, f"{_describe(b, total)}: {why}", b.index, "fenced-unclosed", blocks, size
            )
        mentioning = [b for b in blocks if b.mentions_model_new]
        if mentioning:
            b = mentioning[-1]
            if b.parses:
                return Extraction(
                    b.code,
                    "no_model_new",
                    f"{_describe(b, total)} mentions class ModelNew but does not define it at module level",
                    b.index,
                    "mention-only",
                    blocks,
                    size,
                )
            detail = b.error
            return Extraction(
                b.code,
                "unparsable",
                f"{_describe(b, total)} is the last to mention class ModelNew, "
                f"but no block parses and defines it: {detail}",
                b.index,
                "mention-only",
                blocks,
                size,
            )
        return Extraction(
            None,
            "no_model_new",
            f"{total} fenced block(s), none mentions class ModelNew",
            None,
            "",
            blocks,
            size,
        )

    # No fences: the reply itself may be the source.
    tree, error = _parse(text)
    if tree is not None and _defines_model_new(tree.body):
        return Extraction(
            text if text.endswith("\n") else text + "\n",
            None,
            "no fenced block; the whole reply parses and defines ModelNew",
            None,
            "whole-reply",
            blocks,
            size,
        )
    if _MENTION.search(text):
        detail = error or "ModelNew is not defined at module level"
        return Extraction(
            None,
            "unparsable",
            f"no fenced block; the reply mentions class ModelNew but is not Python as a whole ({detail})",
            reply_chars=size,
        )
    if tree is not None and any(
        isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom))
        for node in tree.body
    ):
        return Extraction(
            None, "no_model_new", "no fenced block; the reply is Python but defines no ModelNew", reply_chars=size
        )
    return Extraction(None, "no_code", "no fenced code block and the reply is not Python", reply_chars=size)


# --- patches (the repository track) ------------------------------------------

_DIFF_GIT = re.compile(r"^diff --git (?:\S+) b/(.+?)\s*$")
_OLD_FILE = re.compile(r"^--- (?:a/)?(\S+)")
_NEW_FILE = re.compile(r"^\+\+\+ (?:b/)?(\S+)")


def diff_files(text: str) -> list[str]:
    """The files a diff's headers name (the new name; the old one for a deletion), in order;
    empty when ``text`` holds no file header. Only the headers are read: applying is git's."""
    files: list[str] = []
    lines = text.split("\n")
    for i, line in enumerate(lines):
        found = None
        if m := _DIFF_GIT.match(line):
            found = m.group(1)
        elif (m := _OLD_FILE.match(line)) and i + 1 < len(lines) and (n := _NEW_FILE.match(lines[i + 1])):
            found = m.group(1) if n.group(1) == "/dev/null" else n.group(1)
        if found and found not in files:
            files.append(found)
    return files


def extract_patch(reply: Any) -> Extraction:
    """The unified diff in ``reply`` (module docstring); never raises."""
    try:
        return _extract_patch(reply)
    except Exception as exc:  # a defect of ours must not end a run
        return Extraction(None, "no_diff", f"extraction failed unexpectedly: {type(exc).__name__}: {exc}")


def _extract_patch(reply: Any) -> Extraction:
    text = _as_text(reply).replace("\r\n", "\n").replace("\r", "\n")
    size = len(text)
    if not text.strip():
        return Extraction(None, "no_diff", "the reply is empty", reply_chars=size)
    blocks = find_blocks(text)
    diffs = [(b, files) for b in blocks if (files := diff_files(b.code))]
    if diffs:
        kept: list[tuple[Block, list[str]]] = []
        claimed: set[str] = set()
        for block, files in reversed(diffs):  # a later block restating a file replaces the earlier one
            if not claimed & set(files):
                kept.insert(0, (block, files))
            claimed |= set(files)
        patch = "".join(block.code for block, _ in kept)
        named = sorted({f for _, files in kept for f in files})
        chosen = ", ".join(str(block.index + 1) for block, _ in kept)
        replaced = len(diffs) - len(kept)
        why = f"the diff in block(s) {chosen} of {len(blocks)}, touching {', '.join(named)}"
        if replaced:
            why += f" ({replaced} earlier block(s) naming the same files replaced)"
        how = "fenced" if all(block.closed for block, _ in kept) else "fenced-unclosed"
        return Extraction(patch, None, why, kept[-1][0].index, how, blocks, size)
    files = diff_files(text)
    if files:
        lines = text.split("\n")
        start = next(i for i, line in enumerate(lines)
                     if _DIFF_GIT.match(line) or (_OLD_FILE.match(line) and i + 1 < len(lines)
                                                 and _NEW_FILE.match(lines[i + 1])))
        patch = "\n".join(lines[start:]).rstrip("\n") + "\n"
        return Extraction(patch, None, f"no fenced diff; the reply from line {start + 1} on, touching "
                          f"{', '.join(files)}", None, "whole-reply", blocks, size)
    hunks = "@@ " in text
    message = ("hunks (@@) without ---/+++ file headers: git cannot tell which file they change" if hunks
               else f"{len(blocks)} fenced block(s), none a unified diff" if blocks else "no unified diff in the reply")
    return Extraction(None, "no_diff", message, None, "", blocks, size)
