/** The API's request and answer shapes, named after the generated schemas (src/generated). */

import type { components } from "./generated/api.js";

type Schemas = components["schemas"];

export type Channel = Schemas["StartSessionIn"]["channel"];
export type Role = Schemas["Role"];
export type Value = NonNullable<Schemas["ProposalIn"]["value"]>;
export type Evidence = Schemas["EvidenceIn"];
export type ProposalDraft = Schemas["ProposalIn"];
export type WhoAmI = Schemas["WhoAmIOut"];
export type Subject = Schemas["SubjectOut"];
export type Session = Schemas["SessionOut"];
export type MessageOutcome = Schemas["MessageOutcomeOut"];
export type Transcript = Schemas["TranscriptOut"];
export type EndedSession = Schemas["EndSessionOut"];
export type Proposal = Schemas["ProposalOut"];
export type Decision = Schemas["DecisionOut"];
export type Forgotten = Schemas["ForgetOut"];
export type Note = Schemas["NoteOut"];
export type RecallAnswer = Schemas["RecallOut"];
export type SessionContext = Schemas["ContextOut"];
export type Profile = Schemas["ProfileOut"];
export type History = Schemas["HistoryOut"];
export type Diff = Schemas["DiffOut"];
/** Which clock an `as_of` is read on: `said` (the default) or `known`. */
export type Clock = Schemas["Clock"];
export type PendingList = Schemas["PendingListOut"];
export type EventPage = Schemas["EventPage"];
export type DeadLetters = Schemas["DeadLetterList"];
export type Retried = Schemas["RetryOut"];
export type ApiError = Schemas["ErrorOut"];

export const text = (value: string): Value => ({ type: "text", value });
export const number = (value: string): Value => ({ type: "number", value });
export const money = (amount: string, currency: string): Value => ({ type: "money", amount, currency });
export const day = (value: string): Value => ({ type: "date", value });
export const boolean = (value: boolean): Value => ({ type: "boolean", value });
export const items = (...values: string[]): Value => ({ type: "list", items: values });
