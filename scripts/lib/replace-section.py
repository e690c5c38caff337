"""Puts a Markdown section into a benchmarks file, leaving the rest as it was:
  replace-section.py SECTION FILE [START]
the section that starts with START (default: SECTION's first line, whole) is replaced up to the next
"## " heading, or SECTION is appended when FILE has none (a missing FILE starts with the title).
scripts/lib/issue56.sh and scripts/lib/roaming.sh write their sections with it."""
import sys

section = open(sys.argv[1]).read()
path = sys.argv[2]
start_text = sys.argv[3] if len(sys.argv) > 3 else section.split("\n", 1)[0] + "\n"
try:
    text = open(path).read()
except FileNotFoundError:
    text = "# Benchmarks: octunnel vs ssh -N -L\n"
start = text.find("\n" + start_text)
if start >= 0:
    end = text.find("\n## ", start + 1)
    text = text[:start] + "\n" + section + (text[end:] if end >= 0 else "")
else:
    text = text.rstrip("\n") + "\n\n" + section
open(path, "w").write(text)
