"""JUnit XML, the report format CI systems (Jenkins, GitLab, GitHub Actions, Azure) display.

One <testsuite> of one <testcase> per expression file: a file whose values changed has a
<failure> listing each mismatch; one that could not be run, an <error>; a new file without a
record is a <failure> of type "new", since it does not pass.
"""

from __future__ import annotations

import datetime
import re
import socket
import xml.etree.ElementTree as ElementTree
from pathlib import PurePath

from .files import write_replacing
from .one_file import ERRORED, FAILED, NEW, PENDING, UPDATED
from .reporting import RunSummary, point_text, value_text


_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml(text: str) -> str:
    """Text XML 1.0 can hold: other control characters (from a hostile file) become U+FFFD."""
    return _NOT_XML.sub("\ufffd", text)


def junit_xml(summary: RunSummary, suite_name: str = "autodiff") -> bytes:
    failures = sum(r.status in (FAILED, NEW, PENDING) for r in summary.results)
    errors = sum(r.status == ERRORED for r in summary.results)
    counts = {"tests": str(len(summary.results)), "failures": str(failures), "errors": str(errors), "skipped": "0",
              "time": f"{summary.seconds:.6f}"}
    root = ElementTree.Element("testsuites", {"name": suite_name, **counts})
    suite = ElementTree.SubElement(root, "testsuite", {
        "name": suite_name, **counts,
        "timestamp": datetime.datetime.now().replace(microsecond=0).isoformat(),
        "hostname": socket.gethostname() or "localhost",
    })
    for result in summary.results:
        path = PurePath(result.path)
        classname = ".".join(part for part in path.parent.as_posix().split("/") if part not in ("", ".")) or "."
        case = ElementTree.SubElement(suite, "testcase", {
            "classname": _xml(classname), "name": _xml(path.name), "file": _xml(result.path), "time": f"{result.seconds:.6f}",
        })
        if result.status == FAILED:
            lines = [f"{m.quantity} at {point_text(m.point)}: expected {value_text(m.expected)}, got "
                     f"{value_text(m.got)} ({m.difference})" for m in result.mismatches]
            failure = ElementTree.SubElement(case, "failure", {
                "message": f"{len(result.mismatches)} value(s) differ from the golden record", "type": "mismatch"})
            failure.text = _xml("\n".join(lines))
        elif result.status in (NEW, PENDING):
            ElementTree.SubElement(case, "failure", {"message": _xml(result.message), "type": result.status})
        elif result.status == ERRORED:
            ElementTree.SubElement(case, "error", {"message": _xml(result.message), "type": "errored"})
        elif result.status == UPDATED:
            ElementTree.SubElement(case, "system-out").text = _xml(result.message)
    ElementTree.indent(root)
    return ElementTree.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def write_junit(summary: RunSummary, destination) -> None:
    """Write the report whole, replacing any earlier one in one step (see files.write_replacing);
    WriteProblem when it cannot be written there."""
    write_replacing(destination, junit_xml(summary), "--junit")


def files_in_report(data: bytes, where: str) -> list:
    """The `file` of every testcase of a JUnit report (`autodiff test merge`)."""
    try:
        root = ElementTree.fromstring(data)
    except ElementTree.ParseError as exc:
        raise ValueError(f"{where}: not a JUnit XML report ({exc})") from None
    return [case.get("file") or case.get("name") or "" for case in root.iter("testcase")]
