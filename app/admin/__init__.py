"""Operator commands on accounts: `geosvc admin` over the features' services, audited."""
