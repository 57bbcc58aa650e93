"""A local Supermemory v5 server that follows the vendor's OpenAPI spec, for tests and demos."""
