"""Which module of this package registers each measure family: ``base.FAMILIES`` imports a family's module the
first time the family is asked for, so that scoring nDCG@10 loads nDCG's module and not forty-odd others (the
start-up of ``score`` on a small run, bench/README.md "W2, round 2").

The order is the order in which importing every family module (sorted by name, as the package once did at
import) registers them: iterating ``FAMILIES`` lists the families in it.  Adding a family is adding its module
and its line here; ``tests/test_measure_catalog.py`` fails while the two disagree.
"""

MODULES = {  # family name -> module in trec_bridge.measures that registers it
    "alpha_nDCG": "alpha_ndcg", "AP": "ap", "binG": "bin_g", "Bpref": "bpref", "Compat": "compat", "ERR": "err",
    "ERR_IA": "err_ia", "nDCG": "ndcg", "G": "g", "GMBpref": "gm_bpref", "GMAP": "gm_map", "infAP": "infap",
    "INSQ": "insq", "INST": "inst", "IPrec": "iprec", "AvgIPrec": "iprec_avg", "Judged": "judged",
    "nDCG_rel": "ndcg_rel", "NERR8": "nerr", "NERR9": "nerr", "NERR10": "nerr", "NERR11": "nerr", "NRBP": "nrbp",
    "NumNonRelJudgedRet": "num_nonrel_judged_ret", "NumQ": "num_q", "NumRel": "num_rel", "NumRelRet": "num_rel_ret",
    "NumRet": "num_ret", "P_IA": "p_ia", "P": "precision", "RBP": "rbp", "R_cap": "rcap", "R": "recall",
    "RelativeP": "relative_p", "RnDCG": "rndcg", "Rprec": "rprec", "RprecMult": "rprec_mult", "RR": "rr",
    "SDCG": "sdcg", "SetAP": "set_ap", "SetF": "set_f", "SetP": "set_p", "SetR": "set_recall", "SetRelP": "set_rel_p",
    "StRecall": "strecall", "Success": "success", "Utility": "utility",
}
