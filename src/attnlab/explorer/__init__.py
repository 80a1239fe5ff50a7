"""attnlab.explorer"""
