"""basalt-bench's HTML report opened in a real headless Chromium (issue 25): the page
renders (a screenshot that is not blank), and the DOM Chromium built holds every chart
with the right number of points. Skipped where Debian's `chromium` is not installed
(the README's test command installs it)."""

import os
import re
import shutil
import struct
import subprocess
import tempfile
import zlib

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BENCH = os.environ.get("BASALT_BENCH_BIN", os.path.join(REPO, "target", "debug", "basalt-bench"))
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")


def chromium(*args, timeout=60):
    # --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", *args],
                          capture_output=True, text=True, timeout=timeout)


def png_rows(path):
    """The PNG's rows of pixels (8-bit RGB or RGBA, not interlaced), unfiltered."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and color in (2, 6), (depth, color)
            bpp = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for r in range(height):
        f, line = raw[r * (stride + 1)], bytearray(raw[r * (stride + 1) + 1:(r + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return rows, bpp


def test_the_memtier_report_renders_in_chromium(shared_target):
    if not os.access(BENCH, os.X_OK):
        pytest.skip(f"{BENCH} not built")
    d = tempfile.mkdtemp(prefix="report-")
    page = os.path.join(d, "r.html")
    r = subprocess.run([BENCH, "memtier", "--server", shared_target.host, "--port", str(shared_target.port),
                        "--threads", "1", "--clients", "4", "--test-time", "2", "--ratio", "1:1",
                        "--key-prefix", "report:", "--hide-histogram", "--report", page],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    dom = chromium("--dump-dom", f"file://{page}")
    assert dom.returncode == 0, dom.stderr
    counts = [(m.group(1), int(m.group(2))) for m in re.finditer(r'data-name="([^"]*)" data-points="(\d+)"', dom.stdout)]
    assert counts[:2] == [("SET", 51), ("GET", 51)], counts
    seconds = counts[2][1]
    assert 2 <= seconds <= 3 and all(n == seconds for _, n in counts[2:]), counts
    assert len(counts) == 6, counts
    # Chromium turned each polyline's points into geometry: the DOM has three SVGs.
    assert dom.stdout.count("<svg") == 3
    shot = os.path.join(d, "r.png")
    s = chromium(f"--screenshot={shot}", "--window-size=900,1600", f"file://{page}")
    assert os.path.exists(shot), s.stderr
    rows, bpp = png_rows(shot)
    colours = {row[i:i + 3] for row in rows[::4] for i in range(0, len(row), bpp * 4)}
    # A blank page is one colour; text, axes and six coloured lines are many.
    assert len(colours) > 20, len(colours)
    shutil.rmtree(d, ignore_errors=True)
