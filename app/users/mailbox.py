"""Which mailbox an address reaches: the unit of "one free quota per person".

`ada+agent1@example.com` and `ada@example.com` land in the same inbox (a `+tag` is a
sub-address almost every provider delivers to the base address), and Gmail ignores dots
in the local part and answers for googlemail.com too. So they are one mailbox, and one
account (hence one free quota) per mailbox. Other providers' dots are significant and
kept. The address itself is stored as typed (lower-cased); only the mailbox is unique.
"""

from __future__ import annotations

GMAIL_DOMAINS = ("gmail.com", "googlemail.com")


def normalise_email(email: str) -> str:
    return email.strip().lower()


def mailbox_of(email: str) -> str:
    local, _, domain = normalise_email(email).rpartition("@")
    untagged = local.split("+", 1)[0] or local  # "+x@..." has no base: keep it whole
    if domain in GMAIL_DOMAINS:
        return f"{untagged.replace('.', '') or untagged}@gmail.com"
    return f"{untagged}@{domain}"
