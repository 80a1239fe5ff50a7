"""attnlab.experiments"""
