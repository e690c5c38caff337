#!/usr/bin/env python3
"""Writes a smaller copy of the ICU data that Foundation links into octunnel.

usage: icu-data.py IN.dat OUT.dat

IN is ICU's common data package (the 34 MB `icudt76_dat` symbol of the toolchain's
lib_FoundationICU.a). OUT keeps every item except the locale data of locales other than
root and English (en, en_*): the per-locale .res files at the top level and in coll/, brkitr/,
curr/, lang/, region/, unit/, zone/, rbnf/ and translit/. Everything that is not locale data
stays: Unicode properties and normalization, the collation root (ucadata.icu), break-iteration
rules and dictionaries, converters, time-zone rules and names, supplemental data, pools.

octunnel speaks English, and the few places that format with ICU name their locale
(en_US_POSIX, UTC); a user whose LANG names another locale gets ICU's root/English fallback,
which is what octunnel prints anyway.

The format (ICU's udata "common data", the CmnD table of contents): a data header of
`headerSize` bytes, then uint32 count and `count` pairs (nameOffset, dataOffset), both
relative to the table's start; names are NUL-terminated and sorted; each item starts 16-byte
aligned. Keeping a subset in the same order keeps the names sorted.
"""
import re
import struct
import sys

LOCALE = re.compile(r"^[a-z]{2,3}(_[A-Za-z0-9]+)*$")


def keep(name):
    parts = name.split("/")[1:]  # drop "icudt76l"
    base = parts[-1]
    if not base.endswith(".res"):
        return True
    locale = base[:-4]
    if not LOCALE.match(locale):
        return True  # root, pool, res_index, supplementalData, zoneinfo64, metaZones, ...
    return locale == "en" or locale.startswith("en_")


def main(source, target):
    data = open(source, "rb").read()
    header_size, magic1, magic2 = struct.unpack_from("<HBB", data, 0)
    if (magic1, magic2) != (0xDA, 0x27) or data[12:16] != b"CmnD":
        sys.exit(f"{source}: not an ICU common data package")
    toc = header_size
    count = struct.unpack_from("<I", data, toc)[0]
    entries = [struct.unpack_from("<II", data, toc + 4 + 8 * i) for i in range(count)]
    names, starts = [], []
    for name_offset, data_offset in entries:
        end = data.index(b"\0", toc + name_offset)
        names.append(data[toc + name_offset:end])
        starts.append(toc + data_offset)
    # An item runs to the next one's start; the last to the end of the package.
    ends = starts[1:] + [len(data)]
    kept = [i for i in range(count) if keep(names[i].decode())]

    table = 4 + 8 * len(kept)
    strings = b"".join(names[i] + b"\0" for i in kept)
    first_item = table + len(strings)
    first_item += -(toc + first_item) % 16
    body, offsets, name_at = bytearray(), [], table
    for i in kept:
        offsets.append((name_at, first_item + len(body)))
        name_at += len(names[i]) + 1
        body += data[starts[i]:ends[i]]
        body += b"\0" * (-len(body) % 16)
    out = bytearray(data[:toc])
    out += struct.pack("<I", len(kept))
    for name_offset, data_offset in offsets:
        out += struct.pack("<II", name_offset, data_offset)
    out += strings
    out += b"\0" * (toc + first_item - len(out))
    out += body
    open(target, "wb").write(out)
    print(f"{len(kept)} of {count} items, {len(out)} of {len(data)} bytes")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("\n\n")[1])
    main(sys.argv[1], sys.argv[2])
