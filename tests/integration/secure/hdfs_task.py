"""A task of the secure tests: reads a file the user wrote to HDFS and
writes its result back using only the job's delegation tokens (no Kerberos
ticket: KRB5CCNAME names no cache), through the cluster's Hadoop client
jars (scripts/yarn/yarn.sh dfs) and through WebHDFS with `delegation=`.

    python3 hdfs_task.py INPUT OUTPUT_DIR

Needs TONY_TEST_ROOT (the checkout), TONY_SECURE_YARN_DIR (the cluster),
TONY_TEST_CA_FILE, TONY_TEST_WEBHDFS ("https://host:port") and
TONY_TEST_NN_SERVICE (the NameNode's "ip:port", its tokens' service) from
the job's [env]. With --repeat N --every S it reads INPUT N times, S
seconds apart (a job that outlives its first tokens). With --other-fs
hdfs://host:port (a second NameNode of the job's [security] file_systems)
it also makes OUTPUT_DIR/made-by-task there and lists it, with that
NameNode's token from the same token file."""

import argparse
import base64
import os
import ssl
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.request


def vint(data, at):
    """Hadoop's WritableUtils.readVInt: (value, next offset)."""
    first = data[at] - 256 if data[at] > 127 else data[at]
    if first >= -112:
        return first, at + 1
    size = (-119 - first) if first < -120 else (-111 - first)
    value = 0
    for b in data[at + 1:at + size]:
        value = (value << 8) | b
    return (~value if first < -120 else value), at + size


def text(data, at):
    n, at = vint(data, at)
    return data[at:at + n], at + n


def hdfs_tokens(path):
    """{service: token bytes} of the HDFS delegation tokens in a Writable
    token file."""
    data = open(path, "rb").read()
    assert data[:5] == b"HDTS\0", "not a Writable token file: %r" % data[:5]
    count, at = vint(data, 5)
    found = {}
    for _ in range(count):
        _, at = text(data, at)  # alias
        start = at
        _, at = text(data, at)  # identifier
        _, at = text(data, at)  # password
        kind, at = text(data, at)
        service, at = text(data, at)
        if kind == b"HDFS_DELEGATION_TOKEN":
            found[service.decode()] = data[start:at]
    return found


def hdfs_token_url_string(path, service=None):
    """Token.encodeToUrlString of the HDFS delegation token of `service` (by
    default the first) in a Writable token file: the token's bytes there,
    base64url, no padding."""
    tokens = hdfs_tokens(path)
    assert tokens, "no HDFS_DELEGATION_TOKEN in " + path
    assert service is None or service in tokens, "no token for %s in %s: %s" % (
        service, path, sorted(tokens))
    token = tokens[service] if service else next(iter(tokens.values()))
    return base64.urlsafe_b64encode(token).decode().rstrip("=")


def make_dir_on(other_fs, output_dir, token_file):
    """mkdir, rename and ls on a second NameNode with its token only."""
    service = other_fs[len("hdfs://"):].rstrip("/")
    services = sorted(hdfs_tokens(token_file))
    assert service in services, "no token for %s in the token file: %s" % (service, services)
    base = other_fs.rstrip("/") + output_dir
    dfs("-mkdir", "-p", base + "/making")
    dfs("-mv", base + "/making", base + "/made-by-task")
    listing = dfs("-ls", base).decode()
    assert base + "/made-by-task" in listing, listing
    print("made %s/made-by-task (tokens for %s)" % (base, ", ".join(services)), flush=True)


def dfs(*args, data=None):
    yarn_sh = os.path.join(os.environ["TONY_TEST_ROOT"], "scripts", "yarn", "yarn.sh")
    proc = subprocess.run([yarn_sh, "--dir", os.environ["TONY_SECURE_YARN_DIR"], "dfs",
                           *args], input=data, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=120)
    if proc.returncode != 0:
        sys.exit("hdfs dfs %s failed: %s" % (" ".join(args), proc.stderr.decode()[-2000:]))
    return proc.stdout


def webhdfs(method, path, op, token, body=None):
    ctx = ssl.create_default_context(cafile=os.environ["TONY_TEST_CA_FILE"])
    url = "%s/webhdfs/v1%s?op=%s&delegation=%s" % (os.environ["TONY_TEST_WEBHDFS"], path,
                                                   op, token)
    if method == "PUT":
        url += "&overwrite=true"
        # The NameNode redirects to a DataNode; the second request sends the data.
        req = urllib.request.Request(url, method="PUT")
        try:
            opener = urllib.request.build_opener(NoRedirect,
                                                 urllib.request.HTTPSHandler(context=ctx))
            opener.open(req, timeout=60)
            raise AssertionError("CREATE did not redirect")
        except urllib.error.HTTPError as e:
            if e.code != 307:
                raise
            url = e.headers["Location"]
    req = urllib.request.Request(url, data=body, method=method)
    with urllib.request.urlopen(req, context=ctx, timeout=60) as resp:
        return resp.read()


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args):
        return None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("input")
    p.add_argument("output_dir")
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--every", type=float, default=0)
    p.add_argument("--other-fs")
    args = p.parse_args()
    # Only the job's tokens: no ticket cache at all.
    os.environ["KRB5CCNAME"] = "FILE:" + os.path.join(os.getcwd(), "no-such-ccache")
    token_file = os.environ.get("HADOOP_TOKEN_FILE_LOCATION", "")
    assert token_file and os.path.isfile(token_file), "HADOOP_TOKEN_FILE_LOCATION: " + token_file
    mode = stat.S_IMODE(os.stat(token_file).st_mode)
    assert mode == 0o600, "the token file is %o" % mode
    service = os.environ["TONY_TEST_NN_SERVICE"]
    if args.other_fs:
        make_dir_on(args.other_fs, args.output_dir, token_file)
    for i in range(args.repeat):
        if i:
            time.sleep(args.every)
        through_jars = dfs("-cat", args.input)
        through_webhdfs = webhdfs("GET", args.input, "OPEN",
                                  hdfs_token_url_string(token_file, service))
        assert through_jars == through_webhdfs, (through_jars, through_webhdfs)
        print("read %d bytes at round %d" % (len(through_jars), i), flush=True)
    result = through_jars.upper()
    dfs("-put", "-f", "-", args.output_dir + "/by-jars.txt", data=result)
    webhdfs("PUT", args.output_dir + "/by-webhdfs.txt", "CREATE",
            hdfs_token_url_string(token_file, service), body=result)
    print("HDFS_TASK_DONE", flush=True)


if __name__ == "__main__":
    main()
