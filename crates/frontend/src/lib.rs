//! D front end: lexer, parser (spanned AST) and compile errors with D error tags.
