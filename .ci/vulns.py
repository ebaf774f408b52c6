#!/usr/bin/env python3
"""Reads govulncheck's JSON stream (-format json) on stdin and fails on a
vulnerability Braid's code calls in a module it requires. Vulnerabilities of
the Go standard library are printed as warnings: they are fixed by building
with a newer Go toolchain, not by changing Braid."""
import json
import sys

text = sys.stdin.read()
dec = json.JSONDecoder()
pos, osvs, called = 0, {}, {}
while True:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    if pos >= len(text):
        break
    msg, pos = dec.raw_decode(text, pos)
    if "osv" in msg:
        osvs[msg["osv"]["id"]] = msg["osv"].get("summary", "")
    f = msg.get("finding")
    if f and f.get("trace") and f["trace"][0].get("function"):
        t = f["trace"][0]
        called[f["osv"]] = (t.get("module", "?"), f.get("fixed_version", "no fix"))

stdlib = {k: v for k, v in called.items() if v[0] == "stdlib"}
modules = {k: v for k, v in called.items() if v[0] != "stdlib"}
for vid, (mod, fixed) in sorted(stdlib.items()):
    print(f"warning: {vid} in the Go standard library (fixed in {fixed}): {osvs.get(vid, '')}")
for vid, (mod, fixed) in sorted(modules.items()):
    print(f"error: {vid} in {mod} (fixed in {fixed}): {osvs.get(vid, '')}")
print(f"govulncheck: {len(modules)} called vulnerabilities in required modules, "
      f"{len(stdlib)} in the standard library of this Go toolchain")
sys.exit(1 if modules else 0)
