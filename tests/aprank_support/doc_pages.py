"""The pages a user reads: the README and every Markdown page under docs/, relative to the
repository root, for the docs tests that read them as text."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
#: folders of docs/ that hold build products and templates, not pages
NOT_PAGES = {"_build", "_generated", "generated", "_templates"}


def user_pages(leave_out=("docs/changelog.md",)) -> list:
    """"README.md" and each docs/ page, sorted, but those in ``leave_out`` (by default the
    changelog page, which includes CHANGELOG.md: a record of changes, not a page that
    describes the code)."""
    found = ["README.md"]
    for path in sorted(DOCS.rglob("*.md")):
        rel = path.relative_to(ROOT).as_posix()
        if set(path.relative_to(DOCS).parts) & NOT_PAGES or rel in leave_out:
            continue
        found.append(rel)
    return found
