"""SSH public keys are parsed and checked down to their content, against real ssh-keygen keys."""

import base64
import subprocess

import pytest
from django.core.exceptions import ValidationError
from hypothesis import given
from hypothesis import strategies as st

from accounts.ssh_keys import (
    ALLOWED_KEY_TYPES,
    SshPublicKey,
    parse_ssh_public_key,
    validate_ssh_public_key,
)

SSH_KEYGEN = "/usr/bin/ssh-keygen"

# (name, ssh-keygen arguments, key type, bits)
KINDS = {
    "ed25519": (["-t", "ed25519"], "ssh-ed25519", 256),
    "rsa2048": (["-t", "rsa", "-b", "2048"], "ssh-rsa", 2048),
    "rsa1024": (["-t", "rsa", "-b", "1024"], "ssh-rsa", 1024),
    "ecdsa256": (["-t", "ecdsa", "-b", "256"], "ecdsa-sha2-nistp256", 256),
    "ecdsa384": (["-t", "ecdsa", "-b", "384"], "ecdsa-sha2-nistp384", 384),
    "ecdsa521": (["-t", "ecdsa", "-b", "521"], "ecdsa-sha2-nistp521", 521),
}


class GeneratedKey:
    def __init__(self, directory, name, arguments):
        self.path = directory / name
        subprocess.run(
            [SSH_KEYGEN, "-q", *arguments, "-N", "", "-C", f"{name}@laptop", "-f", str(self.path)],
            check=True,
        )
        self.public = self.path.with_suffix(".pub").read_text()
        self.private = self.path.read_text()
        listed = subprocess.run(
            [SSH_KEYGEN, "-lf", str(self.path.with_suffix(".pub"))],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split()
        self.listed_bits, self.listed_fingerprint = int(listed[0]), listed[1]

    @property
    def key_type(self) -> str:
        return self.public.split()[0]

    @property
    def body(self) -> str:
        return self.public.split()[1]


@pytest.fixture(scope="module")
def keys(tmp_path_factory) -> dict[str, GeneratedKey]:
    directory = tmp_path_factory.mktemp("ssh")
    return {name: GeneratedKey(directory, name, args) for name, (args, _, _) in KINDS.items()}


def rejected(text: str) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        parse_ssh_public_key(text)
    return caught.value


def message(error: ValidationError) -> str:
    return " ".join(error.messages)


@pytest.mark.parametrize("name", [name for name in KINDS if name != "rsa1024"])
def test_real_keys_are_accepted_with_the_fingerprint_ssh_keygen_prints(keys, name):
    generated = keys[name]
    key = parse_ssh_public_key(generated.public)
    _, key_type, bits = KINDS[name]
    assert key == SshPublicKey(
        key_type=key_type, body=generated.body, comment=f"{name}@laptop", bits=bits
    )
    assert key.fingerprint == generated.listed_fingerprint
    assert key.bits == generated.listed_bits
    assert key.line == generated.public.strip()


def test_surrounding_whitespace_is_dropped_and_spaces_in_the_comment_are_kept(keys):
    generated = keys["ed25519"]
    text = f"\n  {generated.key_type}   {generated.body}   Grace  Hopper's laptop \t\n\n"
    key = parse_ssh_public_key(text)
    assert key.comment == "Grace  Hopper's laptop"
    assert key.line == f"{generated.key_type} {generated.body} Grace  Hopper's laptop"


def test_a_key_without_comment_has_a_two_part_line(keys):
    generated = keys["ed25519"]
    key = parse_ssh_public_key(f"{generated.key_type} {generated.body}")
    assert key.comment == ""
    assert key.line == f"{generated.key_type} {generated.body}"
    assert key.fingerprint == generated.listed_fingerprint


def test_the_validator_accepts_a_key_and_refuses_garbage(keys):
    assert validate_ssh_public_key(keys["ecdsa256"].public) is None
    with pytest.raises(ValidationError):
        validate_ssh_public_key("not a key")


def test_a_pasted_private_key_is_refused_with_a_warning(keys):
    for name in ("ed25519", "rsa2048"):
        error = rejected(keys[name].private)
        assert error.code == "private_key"
        assert message(error) == (
            "This is a private key. Never share it: paste the public key, the .pub file."
        )


def test_an_rsa_key_under_2048_bits_is_too_weak(keys):
    error = rejected(keys["rsa1024"].public)
    assert error.code == "weak_rsa"
    assert "1024 bits" in message(error)
    assert "ssh-keygen -t ed25519" in message(error)


def test_an_ed25519_body_under_the_rsa_label_is_a_type_mismatch(keys):
    error = rejected(f"ssh-rsa {keys['ed25519'].body} laptop")
    assert error.code == "type_mismatch"
    assert "ssh-rsa" in message(error)


def test_an_ecdsa_key_labelled_with_another_curve_is_a_type_mismatch(keys):
    assert rejected(f"ecdsa-sha2-nistp384 {keys['ecdsa256'].body}").code == "type_mismatch"


def test_a_curve_name_that_disagrees_with_the_type_is_a_type_mismatch(keys):
    blob = base64.b64decode(keys["ecdsa256"].body)
    forged = blob.replace(b"\x00\x00\x00\x08nistp256", b"\x00\x00\x00\x08nistp384", 1)
    body = base64.b64encode(forged).decode()
    assert rejected(f"ecdsa-sha2-nistp256 {body}").code == "type_mismatch"


@pytest.mark.parametrize(
    "body",
    [
        "AAAA!C3NzaC1lZDI1NTE5",
        "AAAAC3NzaC1lZDI1NTE5AAAAI",
        "AAAAC3NzaC1lZDI1NTE5=",
        "ÀAAAC3NzaC1lZDI1NTE5",
    ],
)
def test_a_body_that_is_not_strict_base64_is_refused(body):
    error = rejected(f"ssh-ed25519 {body} laptop")
    assert error.code == "invalid_base64"
    assert "not valid base64" in message(error)


def test_a_truncated_body_is_refused(keys):
    for name in ("ed25519", "rsa2048", "ecdsa384"):
        blob = base64.b64decode(keys[name].body)
        body = base64.b64encode(blob[:-10]).decode()
        assert rejected(f"{keys[name].key_type} {body}").code == "truncated"


def test_an_ed25519_key_of_the_wrong_length_is_refused():
    blob = b"\x00\x00\x00\x0bssh-ed25519" + b"\x00\x00\x00\x1f" + b"k" * 31
    body = base64.b64encode(blob).decode()
    assert rejected(f"ssh-ed25519 {body}").code == "invalid_key"


def test_trailing_bytes_after_the_key_are_refused(keys):
    blob = base64.b64decode(keys["ed25519"].body) + b"\x00\x00\x00\x00"
    body = base64.b64encode(blob).decode()
    assert rejected(f"ssh-ed25519 {body}").code == "invalid_key"


def test_two_keys_are_refused(keys):
    two_lines = keys["ed25519"].public + keys["ecdsa256"].public
    assert rejected(two_lines).code == "multiple_lines"
    one_line = keys["ed25519"].public.strip() + " " + keys["ecdsa256"].public.strip()
    error = rejected(one_line)
    assert error.code == "multiple_keys"
    assert message(error) == "Paste one key only, on a single line."


@pytest.mark.parametrize("text", ["", "   ", "\n\t\n"])
def test_empty_text_is_refused(text):
    error = rejected(text)
    assert error.code == "empty"
    assert message(error) == "Paste your SSH public key."


def test_an_unknown_type_lists_the_allowed_ones(keys):
    error = rejected(f"ssh-dss {keys['ed25519'].body}")
    assert error.code == "unknown_type"
    assert "“ssh-dss” is not a supported key type" in message(error)
    for key_type in ALLOWED_KEY_TYPES:
        assert key_type in message(error)


def test_an_unknown_type_is_shortened_in_the_message():
    error = rejected("x" * 500 + " AAAA")
    assert error.code == "unknown_type"
    assert "x" * 40 + "…" in message(error)
    assert "x" * 41 not in message(error)


@pytest.mark.parametrize(
    "options",
    ['command="/bin/true"', "no-pty,no-port-forwarding", 'from="10.0.0.1",restrict'],
)
def test_authorized_keys_options_are_refused_as_an_unknown_type(keys, options):
    assert rejected(f"{options} {keys['ed25519'].public}").code == "unknown_type"


def test_a_type_without_body_is_incomplete():
    assert rejected("ssh-ed25519").code == "missing_body"


def test_a_comment_over_200_characters_is_refused(keys):
    generated = keys["ed25519"]
    assert parse_ssh_public_key(f"{generated.key_type} {generated.body} {'c' * 200}")
    error = rejected(f"{generated.key_type} {generated.body} {'c' * 201}")
    assert error.code == "comment_too_long"


def test_a_line_over_16_kilobytes_is_refused(keys):
    assert rejected("ssh-rsa " + "A" * 16 * 1024).code == "too_long"


def test_control_characters_are_refused(keys):
    generated = keys["ed25519"]
    assert (
        rejected(f"{generated.key_type} {generated.body} lap\x00top").code == "invalid_characters"
    )


def test_messages_repeat_no_python_format_markers(keys):
    error = rejected(f"ssh-rsa {keys['ed25519'].body}")
    assert "%(" not in message(error)


KEY_ALPHABET = st.sampled_from(
    [*ALLOWED_KEY_TYPES, "AAAA", "AAAAC3NzaC1lZDI1NTE5", "=", " ", "\n", "PRIVATE KEY"]
)


@given(
    st.one_of(
        st.text(),
        st.lists(st.one_of(KEY_ALPHABET, st.text(max_size=8))).map("".join),
        st.binary().map(lambda raw: "ssh-ed25519 " + base64.b64encode(raw).decode()),
        st.binary().map(lambda raw: "ssh-rsa " + base64.b64encode(raw).decode()),
        st.binary().map(lambda raw: "ecdsa-sha2-nistp521 " + base64.b64encode(raw).decode()),
        st.binary().map(
            lambda raw: "sk-ecdsa-sha2-nistp256@openssh.com " + base64.b64encode(raw).decode()
        ),
    )
)
def test_any_text_is_either_a_key_or_a_validation_error(text):
    try:
        key = parse_ssh_public_key(text)
    except ValidationError as error:
        assert error.code
        assert error.messages
    else:
        assert key.key_type in ALLOWED_KEY_TYPES
        assert parse_ssh_public_key(key.line) == key


def test_the_demo_customers_key_is_a_valid_public_key():
    from accounts.management.commands.load_demo_accounts import DEMO_CUSTOMER_SSH_KEY

    key = parse_ssh_public_key(DEMO_CUSTOMER_SSH_KEY)
    assert (key.key_type, key.comment) == ("ssh-ed25519", "demo-customer@example.com")
