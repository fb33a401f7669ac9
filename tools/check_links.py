#!/usr/bin/python3
"""check_links.py: every relative link of README.md, docs/*.md and docs/journal/*.md resolves.

A link [text](path#anchor) must name an existing file or directory (relative to the page), and
its anchor, if any, a heading of the target page (GitHub's heading ids: lower case, punctuation
dropped, spaces as dashes). Links to http(s) and mailto are not followed. Prints one line per
broken link and exits 1 if there is any.
Usage: /usr/bin/python3 tools/check_links.py [FILE.md ...]
       (default: README.md docs/*.md docs/journal/*.md)
"""
import glob
import os
import re
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINK = re.compile(r"!?\[(?:[^\]`]|`[^`]*`)*\]\(([^)\s]+)\)")


def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(path):
    ids, fenced = set(), False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            base = slug(line.lstrip("#"))
            n, sid = 1, base
            while sid in ids:
                sid, n = f"{base}-{n}", n + 1
            ids.add(sid)
    return ids


def links(path):
    fenced = False
    for lineno, line in enumerate(open(path, encoding="utf-8"), 1):
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        for m in LINK.finditer(re.sub(r"``[^`]*``", "", line)):
            yield lineno, m.group(1)


def main():
    pages = sys.argv[1:] or [os.path.join(TOP, "README.md")] + sorted(
        glob.glob(os.path.join(TOP, "docs", "*.md"))) + sorted(
        glob.glob(os.path.join(TOP, "docs", "journal", "*.md")))
    bad = 0
    for page in pages:
        for lineno, target in links(page):
            if re.match(r"(https?|mailto):", target):
                continue
            path, _, anchor = target.partition("#")
            full = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
            where = f"{os.path.relpath(page, TOP)}:{lineno}: {target}"
            if not os.path.exists(full):
                print(f"{where}: no such file")
                bad += 1
            elif anchor and full.endswith(".md") and anchor not in anchors(full):
                print(f"{where}: no heading #{anchor} in {os.path.relpath(full, TOP)}")
                bad += 1
    if bad:
        print(f"{bad} broken link(s)")
        return 1
    print(f"links: {len(pages)} pages, every relative link resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main())
