/// The Python the tests run their helpers with (the OpenCode stand-in, the hostile servers, relays,
/// probes): Debian's, which scripts/lib/packages.sh installs, never the first `python3` on PATH. A
/// version manager's shim there (pyenv's is a bash script that runs `pyenv exec`, a dozen more
/// processes) took 0.75 s a start on a quiet machine against Debian's 0.06 s, and past 15 s under a
/// load of 20-60: the stand-in's start bound fired on it ("stand-in did not start").
public let python3 = "/usr/bin/python3"
