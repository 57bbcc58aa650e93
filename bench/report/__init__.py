"""The bench report: JSON, Markdown tables and plots."""
