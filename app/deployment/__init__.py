"""What an operator checks before and while deploying: every start-up refusal at once
(`geosvc check-config`) and the settings reference (docs/SETTINGS.md)."""
