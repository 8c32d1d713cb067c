"""POD (Perl's documentation format) to prose paragraphs."""

import pytest

from keras_albert.data.pod_text import expand_codes
from keras_albert.data.pod_text import pod_paragraphs

PERLINTRO = """#!perl
print "code before the POD is not documentation";

=head1 NAME

perlintro - a brief introduction and overview of Perl

=head1 DESCRIPTION

This document is intended to give you a quick
overview of the Perl programming language.

    #!/usr/bin/perl
    print "Hello, world!\\n";

=over 4

=item Scalars

A scalar represents a single value: C<my $animal = "camel";>.
See L<perldata> and L<the functions|perlfunc/print>.

=back

=begin html

<p>Only for the HTML formatter.</p>

=end html

=for comment This paragraph is for no one.

Use C<< $obj->method >> and E<lt>STDINE<gt>, not B<I<both>>.X<index entry>

=cut

sub after_the_pod { 1 }
"""


def test_ordinary_paragraphs_only():
    assert pod_paragraphs(PERLINTRO) == [
        "perlintro - a brief introduction and overview of Perl",
        "This document is intended to give you a quick overview of the Perl programming language.",
        'A scalar represents a single value: my $animal = "camel";. See perldata and the functions.',
        "Use $obj->method and <STDIN>, not both.",
    ]


@pytest.mark.parametrize("text, expected", [
    ("C<$a-E<gt>b>", "$a->b"),
    ("C<<< a >> b >>>", "a >> b"),
    ("L<perlfunc/open>", "open in perlfunc"),
    ('L</"Scalar values">', "Scalar values"),
    ("L<https://www.perl.org/>", "https://www.perl.org/"),
    ("E<eacute>tude, E<0x41>, E<verbar>, E<sol>", "\u00e9tude, A, |, /"),
    ("S<non breaking> F<file.pl> Z<>", "non breaking file.pl "),
    ("if $x < 3 and $y > 2", "if $x < 3 and $y > 2"),
    ("C<unclosed", "unclosed"),
])
def test_expand_codes(text, expected):
    assert expand_codes(text) == expected


def test_windows_line_ends_and_repeated_blank_lines():
    assert pod_paragraphs("=pod\r\n\r\n\r\n\r\nOne line.\r\n\r\n=cut\r\n") == ["One line."]


def test_bad_text_is_named():
    with pytest.raises(ValueError, match="`text` must be a string of POD"):
        pod_paragraphs(None)
