"""Agent frameworks' memory and retrieval on factledger, through the product's Python client.

- `factledger.integrations.langchain` (extra `factledger[langchain]`): `FactledgerRetriever`
  and `FactledgerChatMessageHistory`.
- `factledger.integrations.llamaindex` (extra `factledger[llamaindex]`): `FactledgerRetriever`
  and `FactledgerMemory`.

They speak only HTTP (the client), like any other caller of the API: what a subject's token
may read is all they can return.
"""
