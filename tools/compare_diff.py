"""Print the compare arms whose bytes, needle or names differ between two results.

Usage: python3 tools/compare_diff.py OLD.json NEW.json
"""

import json
import sys


def arms(path):
    with open(path) as f:
        data = json.load(f)
    out = {}
    for case in data["cases"]:
        for arm in case["arms"]:
            m = arm.get("measure")
            if m is None:
                continue
            out[(case["name"], arm["name"])] = (m["bytes"], m["needle"], m["names_kept"])
    return out


def main():
    old, new = arms(sys.argv[1]), arms(sys.argv[2])
    changed = 0
    for key in sorted(set(old) | set(new)):
        if old.get(key) != new.get(key):
            changed += 1
            print(f"{key[0]:<14} {key[1]:<8} {old.get(key)} -> {new.get(key)}")
    print(f"{changed} arms differ")


if __name__ == "__main__":
    main()
