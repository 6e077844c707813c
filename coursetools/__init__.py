"""The course's own tooling behind the thin commands in tools/: the chapter contract's checkers
(structure, self-checks, lint, links, punctuation) and the generated navigation pages (index pages,
core path, keyword index, glossary). Both course parts (content/入门, content/进阶) go through it."""
