"""attnlab.report"""
