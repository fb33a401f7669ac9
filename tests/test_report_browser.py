#!/usr/bin/python3
"""`bench report` in a real browser: headless Chromium driven by Selenium (Debian's chromium,
chromium-driver, python3-selenium; run by `./bench test --report` and in .ci/run).

    /usr/bin/python3 tests/test_report_browser.py BENCH_EXE [--screenshot PNG] [--keep DIR]

Measures a small sweep (3 kinds x 2 datasets x 3 n, a few seconds) into a results file whose
name holds < & " ' (so the page's text, its figures and the recorded command carry them), writes
its report and loads it through file://. The page passes when:
  - the browser logs no error (console errors, script exceptions, a resource the page's
    Content-Security-Policy refuses) and the page loaded no resource at all (self-contained);
  - there is one <figure> per figure bench report drew, and every figure's <svg> renders: a
    non-zero box, and every marker (<use> of a gnuplot point symbol) resolves to a drawn shape;
  - a click on the "median ms" header of the points table sorts it ascending by that number
    (it was not sorted before), a second click descending; a click on "kind" sorts by name;
  - the command shown under Reproduce is, character for character, the one in /runs with its
    program (the binary's path) written ./bench;
  - at the window's 1280 px, the fits and points tables fit their boxes: no column is hidden
    behind a horizontal scroll.
Then the checks must fail on six broken copies of the page (a script error, an external image,
a hidden figure, markers whose ids do not resolve, no sorting script, cells that never wrap): a check that cannot fail
fails the test. --screenshot saves a full-page PNG of the good page (docs/figures/report.png).
Prints one line per check; exit 0 when all pass, 1 otherwise, 77 (skip) without the browser.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77


def die(msg, status=1):
    print(f"test_report_browser: {msg}", file=sys.stderr)
    sys.exit(status)


try:
    import h5py
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
except ImportError as e:  # pragma: no cover - depends on the machine
    die(f"{e.name} is not installed (./bench test --report installs python3-selenium)", SKIP)

CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"

SWEEP = ["sweep", "--kinds", "full,window,linear", "--n", "128,256,512", "--set", "window=16,32",
         "--dataset", "gaussian,needle", "--heads", "2", "--head-dim", "32", "--reps", "3",
         "--warmup", "0", "--warmup-time", "0", "--min-time", "0", "--threads", "1", "--quiet"]


def make_report(bench, work):
    results = os.path.join(work, "run <1> & \"q\" 'a'.h5")
    report = os.path.join(work, "report.html")
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    for args in (SWEEP + ["--out", results], ["report", results, "--out", report]):
        p = subprocess.run([bench] + args, capture_output=True, text=True, env=env, timeout=300)
        if p.returncode != 0:
            die(f"bench {args[0]} failed ({p.returncode}): {p.stderr.strip()}")
    m = re.search(r"(\d+) figures?", p.stdout)
    if not m:
        die(f"bench report did not say how many figures it drew: {p.stdout!r}")
    with h5py.File(results, "r") as f:
        command = f["runs"]["command"][-1].decode("utf-8")
    return report, int(m.group(1)), command


def browser():
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--window-size=1280,900", "--hide-scrollbars"):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)


def column(driver, table, col):
    return driver.execute_script(
        "var col = arguments[1];"
        "return Array.from(document.querySelectorAll(arguments[0] + ' tbody tr')).map("
        "function (r) { var c = r.cells[col];"
        " return c.hasAttribute('data-v') ? c.getAttribute('data-v') : c.textContent; });",
        table, col)


def header(driver, table, label):
    heads = driver.find_elements(By.CSS_SELECTOR, f"{table} thead th")
    for i, th in enumerate(heads):
        if th.text.strip().rstrip("▲▼ ").strip() == label:
            return i, th
    return None, None


def check_console(driver):
    """Errors the browser logged, and resources the page loaded."""
    problems = [f"console: {e['message']}" for e in driver.get_log("browser")
                if e["level"] == "SEVERE"]
    loaded = driver.execute_script(
        "return performance.getEntriesByType('resource').map(function (e) { return e.name; });")
    problems += [f"loaded a resource: {r}" for r in loaded]
    return problems


def check_figures(driver, nfigures):
    problems = []
    figs = driver.find_elements(By.CSS_SELECTOR, "figure")
    if len(figs) != nfigures:
        problems.append(f"{len(figs)} <figure> elements, bench report drew {nfigures}")
    boxes = driver.execute_script(
        "return Array.from(document.querySelectorAll('figure')).map(function (f) {"
        "  var s = f.querySelector('svg'); if (!s) return null;"
        "  var r = s.getBoundingClientRect(), bad = 0, uses = s.querySelectorAll('use');"
        "  uses.forEach(function (u) { if (u.closest('defs')) return;"
        "    var b = u.getBBox(); if (!(b.width > 0 || b.height > 0)) bad++; });"
        "  return [f.id, r.width, r.height, uses.length, bad]; });")
    for box in boxes:
        if box is None:
            problems.append("a <figure> without an <svg>")
            continue
        fid, w, h, uses, bad = box
        if not (w > 0 and h > 0):
            problems.append(f"{fid}: its <svg> renders {w}x{h}")
        if uses == 0 or bad:
            problems.append(f"{fid}: {bad} of {uses} markers do not resolve to a shape")
    return problems


def check_sorting(driver):
    problems = []
    table = "#points-table"
    col, th = header(driver, table, "median ms")
    if th is None:
        return ["points table: no 'median ms' column"]
    before = [float(v) for v in column(driver, table, col)]
    if before == sorted(before):
        return ["points table: already sorted by median ms before a click (the check would prove "
                "nothing)"]
    th.click()
    up = [float(v) for v in column(driver, table, col)]
    if up != sorted(before):
        problems.append("points table: one click on 'median ms' does not sort it ascending: "
                        f"{up[:6]}...")
    th.click()
    down = [float(v) for v in column(driver, table, col)]
    if down != sorted(before, reverse=True):
        problems.append("points table: a second click does not sort it descending: "
                        f"{down[:6]}...")
    kcol, kth = header(driver, table, "kind")
    if kth is None:
        return problems + ["points table: no 'kind' column"]
    kth.click()
    kinds = column(driver, table, kcol)
    if kinds != sorted(kinds):
        problems.append(f"points table: a click on 'kind' does not sort by name: {kinds[:6]}...")
    return problems


def check_command(driver, command):
    shown = driver.find_element(By.CSS_SELECTOR, "pre.cmd code").get_attribute("textContent")
    program, _, rest = command.partition(" ")
    want = "./bench " + rest if os.path.basename(program) == "bench" else command
    return [] if shown == want else [f"command shown {shown!r}, expected {want!r}"]


def check_tables(driver):
    """Tables wider than their box, hiding columns behind a horizontal scroll."""
    wide = driver.execute_script(
        "return ['#fits-table', '#points-table'].map(function (id) {"
        "  var t = document.querySelector(id); if (!t) return [id, -1, -1];"
        "  return [id, t.scrollWidth, t.parentNode.clientWidth]; });")
    return [f"{t}: {w} px wide in a box of {box} px (columns hidden behind a scroll)"
            if w >= 0 else f"{t}: not found" for t, w, box in wide if w < 0 or w > box]


def check_page(driver, url, nfigures, command):
    driver.get_log("browser")  # drop what earlier pages logged
    driver.get(url)
    found = {"figures": check_figures(driver, nfigures), "sorting": check_sorting(driver),
             "command": check_command(driver, command), "tables": check_tables(driver)}
    found["console"] = check_console(driver)  # last: includes errors of the clicks
    return found


# Broken copies of the page, and the check each must fail.
BROKEN = [
    ("console", "a script error",
     lambda h: h.replace("</body>", "<script>no_such_function();</script>\n</body>")),
    ("console", "an external image",
     lambda h: h.replace("</main>", "<img src=\"https://example.invalid/x.png\" alt=\"\">\n</main>")),
    ("figures", "a hidden figure",
     lambda h: h.replace("<svg", "<svg style=\"display:none\"", 1)),
    ("figures", "markers whose ids do not resolve",
     lambda h: re.sub(r"href='#f1-", "href='#nope-", h)),
    ("sorting", "no sorting script",
     lambda h: h.replace("querySelectorAll('table.sortable')", "querySelectorAll('table.none')")),
    ("tables", "cells that never wrap",
     lambda h: h.replace("</style>", "th,td{white-space:nowrap!important}</style>", 1)
     .replace("<wbr>", "")),
]


def screenshot(driver, url, path):
    driver.get(url)  # fresh: unsorted, at the top
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1280, min(int(height) + 20, 16000))
    driver.save_screenshot(path)
    print(f"test_report_browser: screenshot {path} (1280x{height})")


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        die(__doc__.strip().splitlines()[2].strip(), 2)
    bench, shot, keep = os.path.abspath(args[0]), None, None
    rest = args[1:]
    while rest:
        opt = rest.pop(0)
        if opt not in ("--screenshot", "--keep") or not rest:
            die(f"unknown option or missing value: {opt} (options: --screenshot PNG, --keep DIR)",
                2)
        val = rest.pop(0)
        if opt == "--screenshot":
            shot = os.path.abspath(val)
        else:
            keep = val
    if not (os.access(CHROMIUM, os.X_OK) and os.access(CHROMEDRIVER, os.X_OK)):
        die("chromium or chromedriver is not installed (./bench test --report installs them)", SKIP)
    work = tempfile.mkdtemp(prefix="attnbench-report-")
    failed = 0
    try:
        report, nfigures, command = make_report(bench, work)
        html = open(report, encoding="utf-8").read()
        driver = browser()
        try:
            good = check_page(driver, "file://" + report, nfigures, command)
            for name, problems in good.items():
                print(f"{'FAIL' if problems else 'ok  '} {name}"
                      + "".join(f"\n       {p}" for p in problems))
                failed += bool(problems)
            if shot and not failed:
                screenshot(driver, "file://" + report, shot)
            for n, (name, what, breaks) in enumerate(BROKEN):
                path = os.path.join(work, f"broken{n}.html")
                with open(path, "w", encoding="utf-8") as f:
                    f.write(breaks(html))
                caught = check_page(driver, "file://" + path, nfigures, command)[name]
                print(f"{'ok  ' if caught else 'FAIL'} the {name} check fails on a page with {what}"
                      + (f": {caught[0]}" if caught else ""))
                failed += not caught
        finally:
            driver.quit()
    finally:
        if keep:
            shutil.copytree(work, keep, dirs_exist_ok=True)
        shutil.rmtree(work, ignore_errors=True)
    print(f"test_report_browser: {'FAILED' if failed else 'passed'} "
          f"({len(good)} checks of the report, {len(BROKEN)} broken pages caught"
          f"{'' if not failed else f', {failed} failures'})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
