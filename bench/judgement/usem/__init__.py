"""The multilingual encoder fine-tuned on labelled replies (torch, lab only; ADR 0105)."""
