"""Loaders for the small real data sets used by the experiments.

The data are *not* part of this repository. Each loader reads its files from the *data home*
and downloads the missing ones from their public sources, checking each download's SHA-256
(as scikit-learn's ``fetch_*`` functions do).

Where the data are found (:func:`get_data_home`)
-------------------------------------------------
1. The loader's ``data_home=`` argument, if given.
2. Otherwise the environment variable ``APRANK_DATA``, if it is set and not empty.
3. Otherwise ``~/aprank_data``.

The current directory plays no part. The folder has the layout of the shared data folder
(``mil/birds_hja/...``, ``ltr/yahoo_ltr_sample_lightgbm/...``), so ``APRANK_DATA`` may point at
a copy of that folder (read-only is fine when every file is there). A missing file is
downloaded into the data home from its URL in :data:`REMOTE_FILES` (or from
``<APRANK_DATA_URL>/<path>`` when that variable names a mirror of the folder), with a progress
bar on a terminal; a download whose SHA-256 differs is deleted and refused
(:class:`ChecksumError`). When a file can be neither found nor downloaded, the loader raises
:class:`DataUnavailableError` (a :class:`FileNotFoundError`) saying how to set
``APRANK_DATA``. ``download_if_missing=False`` never touches the network, and
``verify=True`` also checks the SHA-256 of files already in the data home.

Data sets
---------
HJA birdsong (:func:`load_hja_birdsong`, folder ``mil/birds_hja``)
    Briggs, Fern and Raich, KDD 2012. Field recordings from the H. J. Andrews
    forest: 548 recordings (bags) cut into 10232 segments, each described by
    38 features. Each segment has a label, either a species 1..13 or -1
    (unlabelled). The loader keeps only the labelled segments (4998 of them).
    Provenance / licence: MILSurvey repository (CRAPL v0), downloaded from there.

HJA birdsong, recording level (:func:`load_hja_recordings`, folder ``mil/birds_hja``)
    The same 548 recordings as multi-label examples: 76 features (mean, then
    max of the 38 segment features over all segments of the recording) and
    the recording's set of species (1..5 of the 13) from
    ``hja_birdsong_bag_labels.txt``.

HJA birdsong, multiple-instance (:func:`load_hja_bags`, folder ``mil/birds_hja``)
    All 10232 segments (labelled or not) as rows of :class:`MILData`, grouped
    into the 548 recordings (bags); one binary problem per species: a bag is
    positive when the species is in its label set. A positive bag need not
    contain a segment labelled with the species (segments may be unlabelled).

Corel fox / tiger / elephant (:func:`load_mil`, folder ``mil/fox_tiger_elephant``)
    Andrews, Tsochantaridis and Hofmann, NIPS 2002: 200 image bags each
    (100 positive), 230 features per segment; 1320 / 1220 / 1391 segments.
    Provenance / licence: MILSurvey repository (CRAPL v0); its PRTools zip is
    what is downloaded.

MUSK1 (:func:`load_mil`, folder ``mil/musk_uci``)
    UCI MUSK "clean1" (Dietterich, Lathrop and Lozano-Perez 1997): 476
    conformations (rows) of 92 molecules (bags, 47 musk), 166 features. UCI
    publishes it only Unix-compressed (``clean1.data.Z``), so it is not
    downloaded: uncompress it into the data home, or point ``APRANK_DATA`` at
    the shared data folder.

Yahoo! learning-to-rank sample (:func:`load_yahoo_ltr`, folder ``ltr/yahoo_ltr_sample_lightgbm``)
    300 features in [0, 1], graded relevance 0..4; train 3005 documents in
    201 queries, test 768 documents in 50 queries. Queries are stored as
    contiguous blocks of rows, with one query size per line in
    ``rank.<split>.query``.
    Provenance / licence: LightGBM's examples/lambdarank (MIT repo), downloaded
    from there; its maintainers describe it as sampled from the Yahoo! Learning
    to Rank data.
"""
from aprank.datasets._files import (
    DATA_ENV_VAR,
    DEFAULT_DATA_HOME,
    REMOTE_FILES,
    URL_ENV_VAR,
    ChecksumError,
    DataUnavailableError,
    RemoteFile,
    data_dir,
    fetch_file,
    file_sha256,
    get_data_home,
)
from aprank.datasets._loaders import (
    MIL_SETS,
    HJABirdsong,
    HJARecordings,
    MILData,
    YahooLTR,
    load_hja_bags,
    load_hja_birdsong,
    load_hja_recordings,
    load_mil,
    load_yahoo_ltr,
    recording_split,
)

__all__ = ["DATA_ENV_VAR", "URL_ENV_VAR", "DEFAULT_DATA_HOME", "RemoteFile", "REMOTE_FILES",
           "DataUnavailableError", "ChecksumError", "get_data_home", "data_dir", "fetch_file",
           "file_sha256",
           "HJABirdsong", "load_hja_birdsong", "HJARecordings", "load_hja_recordings",
           "recording_split", "MIL_SETS", "MILData", "load_mil", "load_hja_bags", "YahooLTR",
           "load_yahoo_ltr"]
