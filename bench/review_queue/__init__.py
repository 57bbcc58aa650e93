"""The review queue at contact-centre volume: a seeded PostgreSQL ledger and its pages in a
real headless Chromium (issue 31)."""
