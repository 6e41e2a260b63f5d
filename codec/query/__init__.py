"""The filter language: lexer, parser, compiler, RE2 regexes and batches of columns."""
