r"""Exports of a finished output folder for the site and API projects: JSON Lines, JSON, SQLite.

This subpackage owns the formats a site or an API reads, all built from the same data
(`data`) and all deterministic: records in (repository, id) order, keys in the records' own
order, no timestamps, so the same records give byte-identical files (`writers`: JSON Lines and
the choice of format; `json_folder`: one file per record and a listing per repository for a
static site; `sqlite_db`, `pages`, `versions` and `datasette_metadata`: a database that
`datasette` serves as it is). Where an export may write is decided before anything is read
(`target`): a file the crawler did not write is replaced only with `--force`.

The contract, in one example: a plain SQLite client finds a record by a runtime message as
exactly as the record's regex does, because each regex the crawler writes has an exact GLOB
counterpart (`message_glob`); a regex of another shape gets no pattern rather than an
approximate one.

>>> from crawler.serve.export.message_glob import message_glob
>>> message_glob(r"^unknown file mode (?P<mode>[\s\S]*?)$")
MessageGlob(pattern='unknown file mode *', runs=('unknown file mode ', ''))
>>> message_glob(r"^['" + '"' + r"]bad (?P<x>[\s\S]*?)['" + '"' + r"]$").pattern  # a KeyError's repr
'["\']bad *["\']'
>>> print(message_glob(r"^got \d+ items$"))
None

What `crawler export` prints, on a folder `out` holding two repositories and five records:

    $ crawler export out -o site.json --format json
    5 records exported as json to site.json
    $ crawler export out -o site.sqlite
    5 records exported as sqlite to site.sqlite

and the JSON folder it wrote:

    site.json/index.json                        the repositories, each with where its listing is
    site.json/repos/local/acme/lib.json         one repository's records: id, url, kind, ...
    site.json/errors/4ca6959e74317970.json      each record's whole document (schemas/record.schema.json)

`crawler lookup MESSAGE --db site.sqlite` ranks from the database as from a folder.
"""
