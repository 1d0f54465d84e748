"""Reports people read: terminal tables, Markdown, Bencher Metric Format, charts."""
