"""What a sentence judgement says about one sentence or one reply (the `SentenceJudge` port)."""
