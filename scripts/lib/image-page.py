#!/usr/bin/env python3
"""Writes bench.sh's browser page into DIR: page.html with COUNT small PNG images (each a
different 48x48 picture, about 2-7 KB), served by the bench's web server behind the VPS.
The page's load handler puts navigation start -> load event (ms) in its title, which
`chromium --headless --dump-dom` prints.

usage: image-page.py DIR [COUNT]
"""
import os
import struct
import sys
import zlib


def png(size, seed):
    rows = b"".join(b"\x00" + bytes((x * seed + y * 7 + seed * seed) % 256 for x in range(size * 3)) for y in range(size))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def main():
    directory = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    os.makedirs(os.path.join(directory, "img"), exist_ok=True)
    for index in range(count):
        with open(os.path.join(directory, "img", f"{index}.png"), "wb") as out:
            out.write(png(48, index + 3))
    images = "\n".join(f'<img src="/img/{index}.png" width="48" height="48">' for index in range(count))
    with open(os.path.join(directory, "page.html"), "w") as out:
        out.write(f"""<!doctype html>
<html><head><meta charset="utf-8"><title>loading</title>
<script>
addEventListener("load", () => {{
  const navigation = performance.getEntriesByType("navigation")[0];
  document.title = "LOAD " + navigation.loadEventStart.toFixed(1);
}});
</script></head>
<body>
{images}
</body></html>
""")


if __name__ == "__main__":
    main()
