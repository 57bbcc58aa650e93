"""The reviewer's console: server-rendered pages under `/console` for reviewers, analysts and
admins of one tenant, standing on the HTTP API's auth, state and use cases."""
