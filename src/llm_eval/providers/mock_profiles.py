"""Names of the mock provider's behaviour profiles (kept light: validation imports it)."""

#: `varied`: always right, in varied surface forms (Greeklish, no accents, sentences, boxed).
#: `flaky`: wrong on a seeded share of tasks, transient errors on a seeded share of first tries.
PROFILE_NAMES: tuple[str, ...] = ("varied", "flaky")
