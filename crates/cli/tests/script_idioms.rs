//! Idioms of real-world D scripts that Oracle's DTrace accepts, each shown by a minimal
//! program run in the real kernel: variables read by a unary operator before any clause
//! assigns them; integer inlines and folded expressions where a constant is required;
//! strings indexed, and stored into, at a variable index.
//! Each test checks the whole output.

mod common;

use common::{assert_output, dtrace};

/// `!`, `-` and `~` may read a `self->`, `this->` or associative-array variable that only a
/// later clause assigns: DTrace makes it an `int64_t`, zero until set. A plain read of one
/// is refused as DTrace refuses it.
#[test]
fn unary_operator_reads_unassigned_variables() {
    let run = dtrace(&[
        "-q",
        "-n",
        r#"BEGIN /!seen[1]/ { printf("unset %d %d %d\n", -self->x, ~this->y, !self->z[2]); }
           BEGIN { seen[1]++; self->x = 5; }
           BEGIN /!seen[1]/ { printf("never\n"); }
           BEGIN { printf("%d %d\n", seen[1], -self->x); exit(0); }"#,
    ]);
    assert_output(&run, 0, "unset 0 -1 1\n1 -5\n\n", "");

    let run = dtrace(&["-n", "BEGIN /seen[1]/ { exit(0); } BEGIN { seen[1] = 1; }"]);
    assert_output(
        &run,
        1,
        "",
        "dtrace: invalid probe specifier BEGIN /seen[1]/ { exit(0); } BEGIN { seen[1] = 1; }: \
         seen has not yet been declared or assigned\n",
    );
}

/// Where DTrace requires an integer constant (lquantize's bounds and step, a frame count,
/// an array dimension), an integer inline, an enumerator or an expression of constants
/// will do: DTrace's parser puts their values in place.
#[test]
fn inline_and_folded_integer_constants() {
    let run = dtrace(&[
        "-q",
        "-n",
        r#"inline int TOP = 4;
           enum sizes { SMALL = 2 };
           inline int WIDE = TOP * SMALL;
           int cells[WIDE];
           BEGIN {
               @a = lquantize(3, 0, TOP, SMALL / 2);
               @b = lquantize(7, 0, 10 * 100, 5);
               printf("%d\n", sizeof (cells));
               exit(0);
           }"#,
    ]);
    assert_output(
        &run,
        0,
        "32\n\n\n           value  ------------- Distribution ------------- count    \n\
         \x20              2 |                                         0        \n\
         \x20              3 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@ 1        \n\
         \x20           >= 4 |                                         0        \n\
         \n\
         \n           value  ------------- Distribution ------------- count    \n\
         \x20              0 |                                         0        \n\
         \x20              5 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@ 1        \n\
         \x20             10 |                                         0        \n\n",
        "",
    );
}

/// Rates and profile periods take their unit in any case (`10Hz`, `tick-10MS`), as DTrace
/// compares them without regard to case.
#[test]
fn rate_units_in_any_case() {
    let run = dtrace(&[
        "-q",
        "-n",
        "#pragma D option switchrate=10Hz\n\
         tick-10MS { printf(\"tick\\n\"); exit(0); }",
    ]);
    assert_output(&run, 0, "tick\n\n", "");
}

/// A clause-local string's characters may be stored to, as scripts cut a string with
/// `this->s[n] = '\0'`.
#[test]
fn store_into_clause_local_string() {
    let run = dtrace(&[
        "-q",
        "-n",
        r#"BEGIN {
               this->t = stringof("abcdef");
               this->n = 3;
               this->t[this->n] = '\0';
               this->u = "xyz";
               this->u[1] = 'Y';
               printf("%s %s\n", this->t, this->u);
               exit(0);
           }"#,
    ]);
    assert_output(&run, 0, "abc xYz\n\n", "");
}

/// A string variable's characters at an index only known when the probe fires: global,
/// thread-local and clause-local strings alike.
#[test]
fn string_indexed_by_a_variable() {
    let run = dtrace(&[
        "-q",
        "-n",
        r#"BEGIN {
               s = "abcdef";
               self->s = "ghijkl";
               this->s = "mnopqr";
               this->n = 2;
               printf("%c%c%c\n", s[this->n], self->s[this->n + 1], this->s[this->n * 2]);
               exit(0);
           }"#,
    ]);
    assert_output(&run, 0, "cjq\n\n", "");
}
