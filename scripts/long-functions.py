#!/usr/bin/env python3
"""The functions longer than a bound in a tree of Swift files (issue 57: none over 80 lines in
Sources/): every func, init, deinit, subscript, computed property and closure assigned to a
name, measured from its first line to its closing brace by brace matching (comments and string
literals skipped). Prints "LINES path:line: head", longest first, and the count on stderr; exits
1 when any is over the bound (for CI), else 0.

    python3 scripts/long-functions.py [DIR (Sources)] [BOUND (80)]"""
import re, sys, os
LIMIT = int(sys.argv[2]) if len(sys.argv) > 2 else 80
root = sys.argv[1] if len(sys.argv) > 1 else "Sources"
head = re.compile(r'^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|private|fileprivate|internal|static|class|final|override|mutating|nonmutating|nonisolated|required|convenience|@discardableResult|@inlinable)\s+)*'
                  r'(?:func\s+[^\s(<]+|init[?!]?|deinit|(?:let|var)\s+\w+\s*(?::[^=]*)?=\s*\{|(?:let|var)\s+\w+\s*:[^{]*\{\s*$|subscript)')
def strip(line, state):
    out = []; i = 0
    while i < len(line):
        if state['block']:
            j = line.find('*/', i)
            if j < 0: return ''.join(out)
            state['block'] = False; i = j + 2; continue
        if state['str']:
            if line.startswith('"""', i): state['str'] = False; i += 3; continue
            i += 1; continue
        c = line[i]
        if line.startswith('//', i): break
        if line.startswith('/*', i): state['block'] = True; i += 2; continue
        if line.startswith('"""', i): state['str'] = True; i += 3; continue
        if c == '"':
            j = i + 1
            depth = 0
            while j < len(line):
                if line[j] == '\\' and j + 1 < len(line) and line[j+1] == '(':
                    depth += 1; j += 2; continue
                if depth and line[j] == ')': depth -= 1
                elif line[j] == '\\': j += 2; continue
                elif line[j] == '"' and depth == 0: break
                j += 1
            i = j + 1; out.append('""'); continue
        out.append(c); i += 1
    return ''.join(out)
res = []
for d, _, fs in os.walk(root):
    for f in fs:
        if not f.endswith('.swift'): continue
        p = os.path.join(d, f)
        lines = open(p, encoding='utf-8').read().split('\n')
        state = {'block': False, 'str': False}
        clean = [strip(l, state) for l in lines]
        for n, l in enumerate(clean):
            if not head.match(l): continue
            # find the opening brace of the body from this line on
            depth = 0; started = False; end = None
            for m in range(n, len(clean)):
                for ch in clean[m]:
                    if ch == '{': depth += 1; started = True
                    elif ch == '}':
                        depth -= 1
                        if started and depth == 0: end = m; break
                if end is not None: break
                if not started and m > n + 6: break
            if end is None: continue
            length = end - n + 1
            if length > LIMIT:
                res.append((length, p, n + 1, lines[n].strip()[:90]))
for r in sorted(res, reverse=True): print(f"{r[0]:4d} {r[1]}:{r[2]} {r[3]}")
print(len(res), "over", LIMIT, file=sys.stderr)
sys.exit(1 if res else 0)
