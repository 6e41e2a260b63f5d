"""The filter language: lexer, parser, compiler, RE2 regexes, batches of columns and the process-pool pass."""
