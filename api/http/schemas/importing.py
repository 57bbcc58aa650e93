"""Shape of the import's answer: its report (counts and line-numbered errors, no content)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class LineErrorOut(BaseModel):
    line: int = Field(examples=[17])
    field: str = Field(examples=["messages[3].at"])
    rule: str = Field(examples=["is earlier than the session's start or the message before it"])
    error: str = Field(examples=["ConversationTimeError"])


class ImportReportOut(BaseModel):
    import_id: str | None = Field(description="The import's id, when one was given.")
    lines: int = Field(description="The last line handled.")
    resumed_after: int = Field(description="Lines an earlier run of this import id handled.")
    subjects: int = Field(description="Subjects registered (existing ones are not counted).")
    sessions: int = Field(description="Sessions recorded.")
    unchanged: int = Field(description="Sessions found recorded already, with the same content.")
    messages: int = Field(description="Messages recorded.")
    withheld: int = Field(description="Messages dropped by the safety filter or flagged.")
    reviews: int = Field(description="Sessions handed to the proposals step (on the sync).")
    proposals: int | None = Field(
        description="Changes proposed from them; null here: the step runs after the answer."
    )
    error_count: int
    errors: list[LineErrorOut] = Field(description="The first 100 bad lines.")
    stopped: bool = Field(description="`on_error=stop` ended the import before a bad line.")
    finished: bool
