"""The offline, rule-based extractor and summarizer (English and Chinese)."""
