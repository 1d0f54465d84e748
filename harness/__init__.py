"""dbperf: continuous performance-regression harness for MySQL and MariaDB."""

__version__ = "0.1.0"
